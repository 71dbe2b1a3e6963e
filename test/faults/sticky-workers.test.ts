import type { agentWorkflow } from '../../src/workflows';
import { CACHE_MISS_ERROR_TYPE, WORKFLOW_TYPE } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import { useFaultSuite } from '../support/fault-suite';
import { baseActivityName } from '../../src/shared/activity-names';

// Two real worker processes on one task queue, each with its own conversation cache. If each model
// call landed on either worker, half of them would miss the cache; eager dispatch (and, after a
// miss, the worker's own queue) sends a run's calls to the worker that holds its conversation.
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
  const calls = events
    .map((e) => e.activityTaskScheduledEventAttributes)
    .filter((a) => ['firstModelCall', 'callModel'].includes(baseActivityName(a?.activityType?.name ?? '')));
  const queues = calls.map((a) => a?.taskQueue?.name ?? '');
  // Every call goes on the run's own task queue, and eager activity dispatch hands it to the worker
  // completing the workflow task: the worker that caches the run, and holds its conversation.
  expect(new Set(queues)).toEqual(new Set([suite.taskQueue]));
  // So the conversation travels whole once, at the first call, and as a delta after.
  const full = calls.map((a) => {
    const input = JSON.parse(Buffer.from(a!.input!.payloads![0]!.data!).toString()) as {
      conversation: { full: boolean };
    };
    return input.conversation.full;
  });
  expect(full).toEqual([true, ...Array(n).fill(false)]);
});
