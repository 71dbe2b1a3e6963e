/**
 * The errors the CLI prints as one line. They live apart from the modules that throw them so the
 * CLI's entry point (and `--help`) can recognise them without loading the Temporal client.
 */

/** A steering command the run refused; printed as one line, exit code 1. */
export class SteerRefused extends Error {
  override name = 'SteerRefused';
}

/** How a run closed without an `AgentRunResult`. */
export type EndedWithoutResult = 'failed' | 'cancelled' | 'terminated' | 'timed_out';

/** A run that closed without an `AgentRunResult` (cancelled, terminated, timed out, refused input). */
export class RunEndedError extends Error {
  constructor(
    readonly status: EndedWithoutResult,
    readonly reason: string,
  ) {
    super(`run ended '${status}': ${reason}`);
    this.name = 'RunEndedError';
  }
}
