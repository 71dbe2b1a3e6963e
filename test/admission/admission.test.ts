/**
 * Model-call admission end to end (docs/models.md, "Rate limits"): a real Temporal server, a real
 * worker with the real Anthropic SDK, and a fake Messages API that enforces a small input-tokens-per-
 * minute limit as Anthropic documents it (bench/rate-limited-provider.ts). With admission the runs
 * wait for the budget instead of storming the key with 429s, say so with `rate_limited` events, and
 * higher priority goes first.
 */
import { Admission } from '../../src/admission';
import { AnthropicProvider } from '../../src/models/anthropic';
import { WORKFLOW_TYPE, type AgentRunInput, type RunEvent } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { eventsQuery } from '../../src/shared';
import { startRateLimitedProvider, type RateLimitedProvider } from '../../bench/rate-limited-provider';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import { runResult } from '../support/run-helpers';

jest.setTimeout(300_000);

let env: TestEnv;
let provider: RateLimitedProvider | undefined;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

let counter = 0;
/** A small run: a tiny system prompt, one tool, three calls (two glob calls, then the answer). */
function input(workspace: string, extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return {
    prompt: `run r${++counter}: list the files`,
    model: 'claude-sonnet-5-5',
    workspace,
    tools: ['glob'],
    systemPrompt: 'You list files.',
    systemReplace: true,
    ...extra,
  };
}

async function runAll(
  admission: Admission | false,
  runs: Array<Partial<AgentRunInput> & { delayMs?: number }>,
): Promise<Array<{ id: string; events: RunEvent[]; endedAt: number }>> {
  const model = new AnthropicProvider({ baseURL: provider!.url, apiKey: 'sk-admission-test' });
  const workspace = await tempWorkspace('admission');
  return withWorker(env, { model, deps: { admission } }, async (taskQueue) =>
    Promise.all(
      runs.map(async ({ delayMs, ...extra }, i) => {
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        const workflowId = `admission-${Date.now()}-${i}-${++counter}`;
        const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
          taskQueue,
          workflowId,
          args: [input(workspace, extra)],
        });
        const result = await runResult(handle);
        const endedAt = Date.now();
        expect(result.exitReason).toBe('completed');
        const page = await handle.query(eventsQuery, {});
        return { id: workflowId, events: page.events, endedAt };
      }),
    ),
  );
}

// A call here is 480 to 650 input tokens (at the fake's 3 characters a token): a run's 3 calls some 1,700.
const limits = { inputTokensPerMinute: 4800, requestsPerMinute: 600, iterations: 3 };

test('runs beyond the key budget wait for it instead of storming it with 429s, and say so', async () => {
  provider = await startRateLimitedProvider({ ...limits, toolName: 'glob', toolInput: { pattern: '*' }, answerMs: 50 });
  // 5 runs, some 8,500 tokens, against a bucket of 4,800 refilled at 80 a second.
  const runs = await runAll(new Admission(), [{}, {}, {}, {}, {}]);
  const refused = provider.requests.filter((r) => r.status === 429).length;
  expect(provider.requests.filter((r) => r.status === 200)).toHaveLength(15);
  expect(refused).toBeLessThanOrEqual(1);
  const waits = runs.flatMap((r) => r.events.filter((e) => e.kind === 'rate_limited'));
  expect(waits.length).toBeGreaterThan(0);
  for (const wait of waits) expect(wait).toMatchObject({ provider: 'anthropic', waitMs: expect.any(Number) });

  // The same runs with admission off (today's behaviour), on a fresh key: the key is stormed.
  await provider.close();
  provider = await startRateLimitedProvider({ ...limits, toolName: 'glob', toolInput: { pattern: '*' }, answerMs: 50 });
  await runAll(false, [{}, {}, {}, {}, {}]);
  expect(provider.requests.filter((r) => r.status === 429).length).toBeGreaterThan(refused + 2);
});

test('when the budget is short a priority-1 run goes before priority-5 runs that asked first', async () => {
  provider = await startRateLimitedProvider({
    ...limits,
    inputTokensPerMinute: 6000,
    toolName: 'glob',
    toolInput: { pattern: '*' },
    answerMs: 50,
  });
  const runs = await runAll(new Admission(), [
    { priority: 5 },
    { priority: 5 },
    { priority: 5 },
    { priority: 5 },
    { priority: 5 },
    // Starts once the batch runs have drained the bucket.
    { priority: 1, delayMs: 4_000 },
  ]);
  const waited = (r: { events: RunEvent[] }) =>
    r.events.reduce((sum, e) => sum + (e.kind === 'rate_limited' ? e.waitMs : 0), 0);
  const session = runs[5]!;
  const batch = runs.slice(0, 5);
  const batchWaits = batch.map(waited);
  const meanBatchWait = batchWaits.reduce((a, b) => a + b, 0) / batch.length;
  expect(waited(session)).toBeLessThan(meanBatchWait);
  expect(session.endedAt).toBeLessThan(Math.max(...batch.map((r) => r.endedAt)));
});
