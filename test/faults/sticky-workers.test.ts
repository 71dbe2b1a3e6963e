import type { agentWorkflow } from '../../src/workflows';
import { CACHE_MISS_ERROR_TYPE, WORKFLOW_TYPE } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import { useFaultSuite } from '../support/fault-suite';

// Two real worker processes on one task queue, each with its own conversation cache. Without
// sticky activities each model call lands on either worker and half of them miss the cache; with
// them, a run's calls go to the worker that holds its conversation.
jest.setTimeout(90_000);

const suite = useFaultSuite('sticky', { DURABLE_AGENT_STICKY_ACTIVITIES: '1' });

test('with two workers a run keeps calling the one that holds its conversation: no cache misses', async () => {
  const n = 8;
  for (let i = 1; i <= n; i++) {
    suite.fake.enqueue(message([{ type: 'tool_use', id: `toolu_${i}`, name: 'glob', input: { pattern: '*' } }]));
  }
  suite.fake.enqueue(message('all done'));
  await Promise.all([suite.fleet.start().ready(), suite.fleet.start().ready()]);
  const id = `sticky-${Date.now()}`;
  const handle = await suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue: suite.taskQueue,
    workflowId: id,
    args: [{ prompt: 'look around', model: 'claude-sonnet-5-5', workspace: suite.workspace }],
  });
  const result = await handle.result();
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'all done', iterations: n + 1 });
  // The fake saw the whole conversation every time, as the model must.
  suite.fake.requests.forEach((r, i) => expect(r.body.messages).toHaveLength(2 * i + 1));

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
  expect(queues[0]).toBe(suite.taskQueue);
  expect(new Set(queues.slice(1)).size).toBe(1);
  expect(queues[1]?.startsWith(`${suite.taskQueue}@`)).toBe(true);
});
