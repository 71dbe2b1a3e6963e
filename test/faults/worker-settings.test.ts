import {
  DEFAULT_MAX_CACHED_RUNS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DEFAULT_WORKFLOW_TASK_SLOTS,
  parseDurationSetting,
  workerSettings,
} from '../../src/worker';
import { ServerContact, isServerUnavailable } from '../../src/cli/server-contact';

test('worker settings default when the environment says nothing', () => {
  // Calls follow the worker running the run's workflow unless turned off (history stays linear).
  expect(workerSettings({})).toEqual({
    shutdownGraceMs: DEFAULT_SHUTDOWN_GRACE_MS,
    stickyActivities: true,
    maxCachedRuns: DEFAULT_MAX_CACHED_RUNS,
    workflowTaskSlots: DEFAULT_WORKFLOW_TASK_SLOTS,
    cancelWatchMs: 1000,
    // The SDK's per-promise stack traces stay off (src/workflows/sdk/promise-stacks.ts).
    workflowStackTraces: false,
  });
});

test('DURABLE_AGENT_CANCEL_WATCH sets how often a model call asks about a cancel; off or 0 turns it off', () => {
  expect(workerSettings({ DURABLE_AGENT_CANCEL_WATCH: '2s' }).cancelWatchMs).toBe(2000);
  expect(workerSettings({ DURABLE_AGENT_CANCEL_WATCH: '500ms' }).cancelWatchMs).toBe(500);
  for (const off of ['off', '0', 'OFF'])
    expect(workerSettings({ DURABLE_AGENT_CANCEL_WATCH: off }).cancelWatchMs).toBe(0);
  expect(() => workerSettings({ DURABLE_AGENT_CANCEL_WATCH: '10ms' })).toThrow(
    "DURABLE_AGENT_CANCEL_WATCH must be between 100ms and 1m, got '10ms'",
  );
  expect(() => workerSettings({ DURABLE_AGENT_CANCEL_WATCH: 'often' })).toThrow(
    'DURABLE_AGENT_CANCEL_WATCH must be a duration such as 30s',
  );
});

test('DURABLE_AGENT_WORKFLOW_TASK_SLOTS sets the workflow task slots; anything but a whole number from 2 to 1000 is rejected', () => {
  expect(workerSettings({ DURABLE_AGENT_WORKFLOW_TASK_SLOTS: '40' }).workflowTaskSlots).toBe(40);
  for (const raw of ['1', '4.5', 'few', '-3', '1001']) {
    expect(() => workerSettings({ DURABLE_AGENT_WORKFLOW_TASK_SLOTS: raw })).toThrow(
      `DURABLE_AGENT_WORKFLOW_TASK_SLOTS must be a whole number from 2 to 1000, got '${raw}'`,
    );
  }
});

test('DURABLE_AGENT_MAX_CACHED_RUNS bounds the workflow cache; anything but a whole number from 2 is rejected', () => {
  expect(workerSettings({ DURABLE_AGENT_MAX_CACHED_RUNS: '50' }).maxCachedRuns).toBe(50);
  for (const raw of ['1', '2.5', 'many', '-3', '1e9']) {
    expect(() => workerSettings({ DURABLE_AGENT_MAX_CACHED_RUNS: raw })).toThrow(
      `DURABLE_AGENT_MAX_CACHED_RUNS must be a whole number from 2 to 100000, got '${raw}'`,
    );
  }
});

test.each([
  ['0', false],
  ['false', false],
  ['off', false],
  ['1', true],
  ['true', true],
  ['', true],
])('DURABLE_AGENT_STICKY_ACTIVITIES=%s is %s', (raw, on) => {
  expect(workerSettings({ DURABLE_AGENT_STICKY_ACTIVITIES: raw }).stickyActivities).toBe(on);
});

test.each([
  ['30', 30_000],
  ['2.5', 2500],
  ['45s', 45_000],
  ['500ms', 500],
  ['2m', 120_000],
  ['0', 0],
])('DURABLE_AGENT_SHUTDOWN_GRACE=%s is %d ms', (raw, ms) => {
  expect(workerSettings({ DURABLE_AGENT_SHUTDOWN_GRACE: raw }).shutdownGraceMs).toBe(ms);
});

test.each([
  [
    'soon',
    "DURABLE_AGENT_SHUTDOWN_GRACE must be a duration such as 30s, 500ms or 2m (a plain number means seconds), got 'soon'",
  ],
  [
    '-1',
    "DURABLE_AGENT_SHUTDOWN_GRACE must be a duration such as 30s, 500ms or 2m (a plain number means seconds), got '-1'",
  ],
  ['2h', "DURABLE_AGENT_SHUTDOWN_GRACE must be between 0s and 1h, got '2h'"],
])('DURABLE_AGENT_SHUTDOWN_GRACE=%s is rejected with a readable reason', (raw, reason) => {
  expect(() => workerSettings({ DURABLE_AGENT_SHUTDOWN_GRACE: raw })).toThrow(reason);
});

test('DURABLE_AGENT_MODEL_IDLE_TIMEOUT sets the model idle timeout, at least 1 s', () => {
  expect(workerSettings({ DURABLE_AGENT_MODEL_IDLE_TIMEOUT: '20s' }).modelIdleTimeoutMs).toBe(20_000);
  expect(() => parseDurationSetting('X', '10ms', { min: 1000, max: 5000 })).toThrow(
    "X must be between 1s and 5s, got '10ms'",
  );
});

test('an UNAVAILABLE status anywhere in the cause chain means the server is away; other errors do not', () => {
  const grpc = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 });
  expect(isServerUnavailable(new Error('Failed to query Workflow', { cause: grpc }))).toBe(true);
  expect(isServerUnavailable(Object.assign(new Error('x'), { code: 14 }))).toBe(true);
  expect(isServerUnavailable(new Error('query timed out: no worker'))).toBe(false);
  expect(isServerUnavailable(Object.assign(new Error('not found'), { code: 5 }))).toBe(false);
});

test('server contact: one line when lost, a reminder after a while, one line when back', () => {
  const lines: string[] = [];
  let now = 0;
  const contact = new ServerContact(
    (l) => lines.push(l),
    '127.0.0.1:7233',
    'Waiting.',
    30_000,
    () => now,
  );
  contact.back();
  contact.lost(new Error('boom'));
  now = 10_000;
  contact.lost(new Error('boom'));
  now = 31_000;
  contact.lost(new Error('boom'));
  now = 42_000;
  contact.back();
  contact.back();
  expect(lines).toEqual([
    '(lost contact with the Temporal server at 127.0.0.1:7233: boom. Waiting.)',
    '(still no Temporal server at 127.0.0.1:7233 after 31 s; waiting)',
    '(Temporal server back after 42 s)',
  ]);
});
