/**
 * The provider fault matrix through a real workflow, a real worker, the real Anthropic SDK and the
 * local fake Messages API: every transient fault ends with the run completing after exactly one
 * retry (delays from `retry-after` honoured); every permanent one ends the run `failed` at once,
 * with the cause in the result and no second request. (A 429 with `retry-after: 3` and a 400 are in
 * test/workflow/anthropic-provider.test.ts.)
 */
import { AnthropicProvider } from '../../src/models/anthropic';
import { ErrorTypes, type AgentRunInput } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker, type AgentWorker } from '../../src/worker';
import {
  apiError,
  message,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeBehaviour,
} from '../support/fake-anthropic';
import { requestsPerTurn, startAgentRun } from '../support/fault-helpers';
import { runResult } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, testBundlePath, uniqueQueue, type TestEnv } from '../support/temporal';

/** A stalled response is abandoned after this long without bytes (production default: 90 s). */
const IDLE_TIMEOUT_MS = 1500;

let env: TestEnv;
let fake: FakeAnthropic;
let worker: AgentWorker;
let running: Promise<void>;
let workspace: string;
const taskQueue = uniqueQueue('provider');

beforeAll(async () => {
  env = await connectTestEnv();
  fake = await startFakeAnthropic();
  workspace = await tempWorkspace('provider');
  const model = new AnthropicProvider({ baseURL: fake.url, apiKey: 'sk-test', idleTimeoutMs: IDLE_TIMEOUT_MS });
  worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: createDefaultRegistry() },
  });
  running = worker.run();
});
afterAll(async () => {
  if (worker?.getState() === 'RUNNING') worker.shutdown();
  await running;
  await fake?.close();
  await env?.close();
});
beforeEach(() => {
  // One fake for the file: each test starts from an empty record and queue.
  fake.requests.length = 0;
  expect(fake.pending()).toBe(0);
});

function run(extra: Partial<AgentRunInput> = {}) {
  return startAgentRun(env.client, taskQueue, { prompt: 'hello', model: 'claude-sonnet-5-5', workspace, ...extra });
}

const gapMs = () => fake.requests[1]!.receivedAt - fake.requests[0]!.receivedAt;
const RECOVERED = 'Recovered.';

type Transient = [name: string, fault: FakeBehaviour | (() => FakeBehaviour), minGapMs: number, maxGapMs?: number];
const transient: Transient[] = [
  ['429 without retry-after (the retry policy backs off)', apiError(429, 'rate_limit_error', 'Rate limited'), 900],
  [
    '429 with retry-after-ms (the delay it names, not the backoff)',
    apiError(429, 'rate_limit_error', 'Rate limited', { headers: { 'retry-after-ms': '1700' } }),
    1700,
    // Room for a loaded machine; the point is the lower bound (the backoff alone would be 1 s).
    4000,
  ],
  [
    '429 with an HTTP-date retry-after',
    // A date 3.5 s ahead, at one-second resolution: the retry waits at least 2.5 s.
    () =>
      apiError(429, 'rate_limit_error', 'Rate limited', {
        headers: { 'retry-after': new Date(Date.now() + 3500).toUTCString() },
      }),
    2400,
  ],
  ['529 overloaded', apiError(529, 'overloaded_error', 'Overloaded'), 900],
  ['500 internal server error', apiError(500, 'api_error', 'Internal server error'), 900],
  ['502 bad gateway', apiError(502, 'api_error', 'Bad gateway'), 900],
  ['503 service unavailable', apiError(503, 'api_error', 'Service unavailable'), 900],
  ['504 gateway timeout', apiError(504, 'api_error', 'Gateway timeout'), 900],
  ['a connection reset before any response', { kind: 'reset' }, 900],
  [
    'a connection reset in the middle of the stream',
    { kind: 'reset', afterEvents: 3, message: { content: [{ type: 'text', text: 'cut short' }] } },
    900,
  ],
  ['a hung request that never answers (idle timeout)', { kind: 'hang' }, IDLE_TIMEOUT_MS],
  [
    'a stream that stalls after its first events (idle timeout)',
    { kind: 'hang', afterEvents: 2, message: { content: [{ type: 'text', text: 'stalled' }] } },
    IDLE_TIMEOUT_MS,
  ],
  ['a malformed event body', { kind: 'malformed' }, 900],
  [
    'a mid-stream overloaded_error event',
    { kind: 'stream_error', type: 'overloaded_error', message: 'Overloaded' },
    900,
  ],
  ['a mid-stream api_error event', { kind: 'stream_error', type: 'api_error', message: 'Internal error' }, 900],
];

// Rows of one length: jest passes a `done` callback to a function with more parameters than the row.
test.each(transient.map(([name, fault, minGapMs, maxGapMs]) => ({ name, fault, minGapMs, maxGapMs })))(
  '$name: retried once, then the run completes',
  async ({ fault, minGapMs, maxGapMs }) => {
    fake.enqueue(typeof fault === 'function' ? fault() : fault, message(RECOVERED));
    const result = await (await run()).result();

    expect(result).toMatchObject({ exitReason: 'completed', finalText: RECOVERED, iterations: 1 });
    expect(fake.requests).toHaveLength(2);
    expect(requestsPerTurn(fake.requests)).toEqual([2]);
    expect(gapMs()).toBeGreaterThanOrEqual(minGapMs);
    if (maxGapMs !== undefined) expect(gapMs()).toBeLessThan(maxGapMs);
    // Temporal alone retries: every request was one streaming attempt of the activity.
    expect(fake.requests.every((r) => r.body.stream === true)).toBe(true);
  },
);

type Permanent = [name: string, fault: FakeBehaviour, type: string, cause: string];
const permanent: Permanent[] = [
  [
    '401 authentication error',
    apiError(401, 'authentication_error', 'invalid x-api-key'),
    ErrorTypes.Authentication,
    'invalid x-api-key',
  ],
  [
    '403 permission error',
    apiError(403, 'permission_error', 'Your API key does not have permission to use the specified resource.'),
    ErrorTypes.PermissionDenied,
    'does not have permission',
  ],
  [
    '404 not found (unknown model)',
    apiError(404, 'not_found_error', 'model: claude-sonnet-5-5-typo'),
    ErrorTypes.NotFound,
    'model: claude-sonnet-5-5-typo',
  ],
  [
    '413 request too large',
    apiError(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.'),
    ErrorTypes.RequestTooLarge,
    'maximum allowed number of bytes',
  ],
  [
    '429 spend limit (error code), even with retry-after',
    apiError(429, 'rate_limit_error', 'You have reached your specified API usage limits.', {
      errorCode: 'enforced_spend_limit_reached',
      headers: { 'retry-after': '1' },
    }),
    ErrorTypes.BillingLimit,
    'enforced_spend_limit_reached',
  ],
];

test.each(permanent)('%s: the run fails at once with the cause, no retry', async (_name, fault, type, cause) => {
  fake.enqueue(fault);
  const result = await runResult(await run());

  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe(type);
  expect(result.error?.message).toContain(cause);
  expect(fake.requests).toHaveLength(1);
});

test('a provider that keeps failing ends the run failed after the bounded number of attempts', async () => {
  const attempts = 3;
  fake.enqueue(...Array.from({ length: attempts }, () => apiError(503, 'api_error', 'Service unavailable')));
  const result = await runResult(await run({ timeouts: { modelMaxAttempts: attempts } }));

  expect(result.exitReason).toBe('failed');
  expect(result.error).toMatchObject({ type: ErrorTypes.ServerError });
  expect(result.error?.message).toContain('503');
  expect(fake.requests).toHaveLength(attempts);
  expect(fake.pending()).toBe(0);
});
