/**
 * The worker's log lines (issue 10 item 9): an error in a log entry's metadata keeps its message,
 * type and cause instead of printing as `{}`.
 */
import { ApplicationFailure } from '@temporalio/common';
import { formatLogEntry, safeJson } from '../../src/cli/worker-command';

test('an error in a log entry serializes with its name, message, type and cause chain', () => {
  const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  const failure = ApplicationFailure.create({
    message: 'model call failed',
    type: 'ModelError.Connection',
    nonRetryable: false,
    cause: root,
  });
  const line = formatLogEntry({
    level: 'WARN',
    message: 'Activity failed',
    timestampNanos: 1_700_000_000_000_000_000n,
    meta: { activityType: 'callModel', error: failure },
  });
  const meta = JSON.parse(line.slice(line.indexOf('{'))) as { error: Record<string, unknown> };
  expect(meta.error).toEqual({
    name: 'ApplicationFailure',
    message: 'model call failed',
    type: 'ModelError.Connection',
    nonRetryable: false,
    cause: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' },
  });
  expect(line).toMatch(/^2023-11-14T22:13:20\.000Z \[WARN\] Activity failed \{/);
});

test('a cause chain that loops ends instead of recursing for ever', () => {
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  (a as Error & { cause: unknown }).cause = b;
  const json = JSON.parse(safeJson({ error: a })) as { error: { message: string; cause: { message: string } } };
  expect(json.error.message).toBe('a');
  expect(json.error.cause.message).toBe('b');
});
