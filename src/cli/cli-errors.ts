/**
 * The errors the CLI prints as one line. They live apart from the modules that throw them so the
 * CLI's entry point (and `--help`) can recognise them without loading the Temporal client.
 */

/** A steering command the run refused; printed as one line, exit code 1. */
export class SteerRefused extends Error {
  override name = 'SteerRefused';
}

export { CheckpointUnavailable, RunEndedError, type EndedWithoutResult } from '../client/errors';
