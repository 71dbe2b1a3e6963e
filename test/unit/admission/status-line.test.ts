import type { WorkflowExecutionDescription } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { formatRateLimitWait, rateLimitWaits } from '../../../src/cli/rate-limit-status';

const describe_ = (pending: unknown[]) =>
  ({ raw: { pendingActivities: pending } }) as unknown as WorkflowExecutionDescription;

test('status reads a waiting call from the server record: its words and when it next tries', () => {
  const now = 1_000_000_000_000;
  const waits = rateLimitWaits(
    describe_([
      {
        state: temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED,
        lastFailure: {
          message: 'waiting 12 s for the anthropic rate budget',
          applicationFailureInfo: { type: 'DurableAgent.RateLimited' },
        },
        nextAttemptScheduleTime: { seconds: (now + 11_500) / 1000, nanos: 0 },
      },
      // A call that failed for another reason, and one whose next attempt runs: not waiting for the budget.
      { lastFailure: { message: 'boom', applicationFailureInfo: { type: 'ModelError.ServerError' } } },
      {
        state: temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
        lastFailure: { message: 'waiting 1 s', applicationFailureInfo: { type: 'DurableAgent.RateLimited' } },
      },
    ]),
    now,
  );
  expect(waits).toEqual([{ message: 'waiting 12 s for the anthropic rate budget', nextAttemptInMs: 11_500 }]);
  expect(formatRateLimitWait(waits[0]!)).toBe('waiting 12 s for the anthropic rate budget, next try in 12 s');
});
