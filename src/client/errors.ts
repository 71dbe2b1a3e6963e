/**
 * The client's errors that need no Temporal client to recognise: the CLI's entry point (and
 * `--help`) imports them without loading `@temporalio/client`.
 */

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

/** A checkpoint cannot serve what was asked (no checkpoint for that turn, no store): `fork`, `diff`, `rewind`. */
export class CheckpointUnavailable extends Error {
  override name = 'CheckpointUnavailable';
}
