import type { WorkflowExecutionDescription } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ErrorTypes } from '../shared/constants';

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

/** A model call of the run that waits for its provider key's rate budget now (docs/models.md, "Rate limits"). */
export interface RateLimitWait {
  /** The worker's words: `waiting 12 s for the anthropic rate budget`. */
  message: string;
  /** When the call's next attempt goes, ms from the server's record; null when the server says nothing. */
  nextAttemptInMs: number | null;
}

/**
 * Read from the server's record of the run's pending calls (a describe: no query, no billed action): a
 * call whose last attempt ended `DurableAgent.RateLimited` waits for its key's budget until its next attempt.
 */
export function rateLimitWaits(description: WorkflowExecutionDescription, now = Date.now()): RateLimitWait[] {
  const waits: RateLimitWait[] = [];
  for (const a of description.raw.pendingActivities ?? []) {
    const failure = a.lastFailure;
    if (failure?.applicationFailureInfo?.type !== ErrorTypes.AdmissionWait) continue;
    // Only while no newer attempt runs: a started attempt has gone out (or waits inside itself).
    if (a.state === STARTED) continue;
    const next = a.nextAttemptScheduleTime?.seconds;
    const nextMs =
      next !== undefined && next !== null
        ? Number(next) * 1000 + Math.round((a.nextAttemptScheduleTime?.nanos ?? 0) / 1e6) - now
        : null;
    waits.push({
      message: String(failure.message ?? 'waiting for the rate budget').slice(0, 200),
      nextAttemptInMs: nextMs === null ? null : Math.max(0, nextMs),
    });
  }
  return waits;
}

/** The `status` line of a waiting call. */
export function formatRateLimitWait(wait: RateLimitWait): string {
  const next = wait.nextAttemptInMs === null ? '' : `, next try in ${Math.ceil(wait.nextAttemptInMs / 1000)} s`;
  return `${wait.message}${next}`;
}
