import type { agentWorkflow } from '../../src/workflows';
import { CACHE_MISS_ERROR_TYPE, WORKFLOW_TYPE } from '../../src/shared';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import {
  connectTestEnv,
  tempWorkspace,
  testAddress,
  testBundlePath,
  uniqueQueue,
  type TestEnv,
} from '../support/temporal';
import { WorkerFleet } from '../support/worker-harness';

// Two real worker processes on one task queue, each with its own conversation cache. Without
// sticky activities each model call lands on either worker and half of them miss the cache; with
// them, a run's calls go to the worker that holds its conversation.
jest.setTimeout(90_000);

let env: TestEnv;
let fake: FakeAnthropic;
let taskQueue: string;
const fleet = new WorkerFleet(() => ({
  TEMPORAL_ADDRESS: testAddress(),
  TEMPORAL_TASK_QUEUE: taskQueue,
  DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
  ANTHROPIC_BASE_URL: fake.url,
  ANTHROPIC_API_KEY: 'sk-test',
  DURABLE_AGENT_STICKY_ACTIVITIES: '1',
}));

beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  fake = await startFakeAnthropic();
  taskQueue = uniqueQueue('sticky');
});
afterEach(async () => {
  await fleet.stopAll();
  await fake?.close();
});

test('with two workers a run keeps calling the one that holds its conversation: no cache misses', async () => {
  const n = 8;
  for (let i = 1; i <= n; i++) {
    fake.enqueue(message([{ type: 'tool_use', id: `toolu_${i}`, name: 'glob', input: { pattern: '*' } }]));
  }
  fake.enqueue(message('all done'));
  await Promise.all([fleet.start().ready(), fleet.start().ready()]);
  const workspace = await tempWorkspace('sticky');
  const id = `sticky-${Date.now()}`;
  const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: id,
    args: [{ prompt: 'look around', model: 'claude-sonnet-5-5', workspace }],
  });
  const result = await handle.result();
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'all done', iterations: n + 1 });
  // The fake saw the whole conversation every time, as the model must.
  fake.requests.forEach((r, i) => expect(r.body.messages).toHaveLength(2 * i + 1));

  const events = (await handle.fetchHistory()).events ?? [];
  const misses = events.filter(
    (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === CACHE_MISS_ERROR_TYPE,
  );
  expect(misses).toHaveLength(0);
  const queues = events
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => a?.activityType?.name === 'callModel')
    .map((a) => a?.taskQueue?.name ?? '');
  // The first call goes to the shared queue; every later one to one worker's own queue.
  expect(queues[0]).toBe(taskQueue);
  expect(new Set(queues.slice(1)).size).toBe(1);
  expect(queues[1]?.startsWith(`${taskQueue}@`)).toBe(true);
});
