import { z } from 'zod';
import { ConversationCache } from '../../src/activities';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { ScriptStep } from '../../src/models';
import type { AgentRunInput, ModelRequest } from '../../src/shared';
import { CACHE_MISS_ERROR_TYPE, WORKFLOW_TYPE, eventsQuery, interruptSignal, stateQuery } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import { COMPACTION_INSTRUCTION } from '../../src/workflows/steps/compaction';
import type { agentWorkflow } from '../../src/workflows';
import { NativeConnection } from '@temporalio/worker';
import { testAddress, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { baseActivityName } from '../../src/shared/activity-names';

const { suite } = useWorkflowSuite('history');

let counter = 0;
const newId = (label: string) => `${label}-${Date.now()}-${++counter}`;

/** A registry with a zero-latency read-only tool that returns `bytes` characters. */
function registryWithBlob() {
  const tools = createDefaultRegistry();
  tools.register({
    name: 'blob',
    description: 'returns a block of text',
    inputSchema: z.object({ bytes: z.number(), tag: z.string() }),
    sideEffect: 'read_only',
    execute: async ({ bytes, tag }) => `${tag}:`.padEnd(bytes, 'x'),
  });
  return tools;
}

/** `n` turns that each call `blob` once, then a final answer. */
function blobScript(n: number, bytes = 8192): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let i = 1; i <= n; i++) {
    steps.push(
      toolUse([{ id: `toolu_${i}`, name: 'blob', input: { bytes, tag: `out${i}` } }], { usage: { inputTokens: 10 } }),
    );
  }
  steps.push(text('all done'));
  return steps;
}

function start(taskQueue: string, input: Partial<AgentRunInput>, workflowId = newId('hist')) {
  return suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [{ prompt: 'produce output', model: 'scripted-test', workspace: suite.workspace, ...input }],
  });
}

async function historyOf(workflowId: string, runId?: string) {
  const history = await suite.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return history.events ?? [];
}

function payloadBytes(payloads: { data?: Uint8Array | null }[] | null | undefined): number {
  return (payloads ?? []).reduce((sum, p) => sum + (p.data?.length ?? 0), 0);
}

/** Every request the model saw holds the full conversation so far, in order. */
function expectFullConversations(requests: ModelRequest[]): void {
  requests.forEach((request, i) => expect(request.messages).toHaveLength(2 * i + 1));
}

test('model calls carry only the new messages: history records each tool output about once', async () => {
  const n = 20;
  const model = new ScriptedModel(blobScript(n));
  const id = newId('linear');
  const result = await withWorker(suite.env, { model, deps: { tools: registryWithBlob() } }, async (tq) =>
    (await start(tq, {}, id)).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', iterations: n + 1 });
  expectFullConversations(model.requests);
  // The model saw every tool output in full.
  const lastRequest = JSON.stringify(model.requests[n]?.messages);
  for (let i = 1; i <= n; i++) expect(lastRequest).toContain(`out${i}:xxxx`);

  const events = await historyOf(id);
  const typeOf = (e: (typeof events)[number]) =>
    baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
  const scheduled = events.filter((e) => typeOf(e) === 'callModel' || typeOf(e) === 'firstModelCall');
  expect(scheduled.map(typeOf)).toEqual(['firstModelCall', ...Array<string>(n).fill('callModel')]);
  const modelInputs = scheduled.map((e) => payloadBytes(e.activityTaskScheduledEventAttributes?.input?.payloads));
  // The system prompt is recorded once: the first call assembles it and returns it with its answer;
  // no call sends it (later ones send its hash).
  const systems = scheduled.map((e) => {
    const data = e.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
    return (JSON.parse(Buffer.from(data!).toString()) as { system?: string }).system;
  });
  expect(systems.every((s) => s === undefined)).toBe(true);
  const first = events.find(
    (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduled[0]?.eventId),
  );
  const firstResult = JSON.parse(
    Buffer.from(first!.activityTaskCompletedEventAttributes!.result!.payloads![0]!.data!).toString(),
  ) as { prepared?: { context?: { system?: string } } };
  expect(firstResult.prepared?.context?.system?.length).toBeGreaterThan(100);
  // Tool results travel by reference: no model call input holds a tool output.
  modelInputs.forEach((bytes) => expect(bytes).toBeLessThan(2048));
  const total = events.reduce(
    (sum, e) =>
      sum +
      payloadBytes(e.activityTaskScheduledEventAttributes?.input?.payloads) +
      payloadBytes(e.activityTaskCompletedEventAttributes?.result?.payloads),
    0,
  );
  // n tool outputs of 8 KB once each, plus small change; a resend-everything loop would hold ~n²/2 of them.
  expect(total).toBeGreaterThan(n * 8192);
  expect(total).toBeLessThan(n * 8192 * 1.25);
});

test('a worker without the conversation resends it in full once and the run completes correctly', async () => {
  const n = 4;
  const model = new ScriptedModel(blobScript(n, 100));
  const id = newId('miss');
  // A cache that keeps nothing: every delta misses, as on a worker that just restarted.
  const conversations = new ConversationCache({ maxConversations: 0 });
  const result = await withWorker(
    suite.env,
    { model, deps: { tools: registryWithBlob(), conversations } },
    async (tq) => (await start(tq, {}, id)).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', iterations: n + 1 });
  expectFullConversations(model.requests);
  expect(model.requests).toHaveLength(n + 1);
  const events = await historyOf(id);
  const misses = events.filter(
    (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === CACHE_MISS_ERROR_TYPE,
  );
  // Every call after the first tried a delta, missed, and went again in full: one resend each, no more.
  expect(misses).toHaveLength(n);
  expect(conversations.snapshot()).toMatchObject({ hits: 0, fullLoads: n + 1 });
});

test('a new worker picks up a run mid-way and continues from a full resend', async () => {
  const model = new ScriptedModel(blobScript(6, 100));
  const id = newId('handover');
  const tools = registryWithBlob();
  const taskQueue = `handover-${Date.now()}`;
  await withWorker(suite.env, { model, deps: { tools }, taskQueue }, async (tq) => {
    const handle = await start(tq, {}, id);
    for (;;) {
      const state = await handle.query(stateQuery);
      if (state.iteration >= 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  const fresh = new ConversationCache();
  const result = await withWorker(suite.env, { model, deps: { tools, conversations: fresh }, taskQueue }, async () =>
    suite.env.client.workflow.getHandle<typeof agentWorkflow>(id).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', iterations: 7 });
  expectFullConversations(model.requests);
  expect(fresh.snapshot().fullLoads).toBeGreaterThanOrEqual(1);
});

test('continue-as-new keeps the run whole: iterations, usage, events, state and result carry over', async () => {
  const n = 12;
  const model = new ScriptedModel(blobScript(n, 200));
  const id = newId('can');
  await withWorker(suite.env, { model, deps: { tools: registryWithBlob() } }, async (tq) => {
    const handle = await start(tq, { continueAsNewAfter: { events: 50 } }, id);
    const result = await suite.env.client.workflow.getHandle<typeof agentWorkflow>(id).result();
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'all done', iterations: n + 1 });
    expect(result.usage.inputTokens).toBe(10 * n);
    expectFullConversations(model.requests);

    const latest = await suite.env.client.workflow.getHandle(id).describe();
    expect(latest.runId).not.toBe(handle.firstExecutionRunId);
    // Every execution stayed near the limit instead of growing with the run.
    let runId: string | undefined = handle.firstExecutionRunId;
    let executions = 0;
    while (runId) {
      const events = await historyOf(id, runId);
      executions++;
      expect(events.length).toBeLessThan(90);
      runId = events[events.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    }
    expect(executions).toBeGreaterThanOrEqual(3);

    // Queries go to the newest execution and see the whole run; the event cursor never restarts.
    const state = await suite.env.client.workflow.getHandle<typeof agentWorkflow>(id).query(stateQuery);
    expect(state).toMatchObject({ status: 'completed', iteration: n + 1 });
    const page = await suite.env.client.workflow.getHandle(id).query(eventsQuery, { after: 0 });
    const seqs = page.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(page.events.some((e) => e.kind === 'notice' && e.message.includes('continued as new'))).toBe(true);
    expect(page.events.at(-1)).toMatchObject({ kind: 'run_finished', exitReason: 'completed' });
  });
});

test('an interrupt reaches a run that has continued as new', async () => {
  const steps: ScriptStep[] = blobScript(8, 100).slice(0, 8);
  // The ninth call never answers until cancelled.
  steps.push(async (_req, ctx) => {
    await new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    return text('unreachable');
  });
  const model = new ScriptedModel(steps);
  const id = newId('can-int');
  await withWorker(suite.env, { model, deps: { tools: registryWithBlob() } }, async (tq) => {
    const first = await start(tq, { continueAsNewAfter: { events: 50 } }, id);
    const latest = suite.env.client.workflow.getHandle<typeof agentWorkflow>(id);
    for (;;) {
      const state = await latest.query(stateQuery);
      if (state.iteration >= 8) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await latest.describe()).runId).not.toBe(first.firstExecutionRunId);
    await latest.signal(interruptSignal, { reason: 'stop after continue-as-new' });
    const result = await latest.result();
    expect(result).toMatchObject({ exitReason: 'interrupted', iterations: 8 });
  });
});

test('near the context window the run compacts older turns into a summary and goes on', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'blob', input: { bytes: 50, tag: 'first' } }], { usage: { inputTokens: 300 } }),
    // 900 of 1000 tokens: past the compaction threshold.
    toolUse([{ id: 'toolu_2', name: 'blob', input: { bytes: 50, tag: 'second' } }], { usage: { inputTokens: 900 } }),
    text('SUMMARY: read two blobs, first and second.'),
    text('finished after compaction'),
  ]);
  const result = await withWorker(suite.env, { model, deps: { tools: registryWithBlob() } }, async (tq) =>
    (await start(tq, { contextWindowTokens: 1000 })).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'finished after compaction', iterations: 3 });
  expect(model.requests).toHaveLength(4);
  const compaction = model.requests[2];
  expect(compaction?.toolChoice).toEqual({ type: 'none' });
  expect(JSON.stringify(compaction?.messages.at(-1))).toContain('nearing the limit of your context window');
  expect(compaction?.messages).toHaveLength(5);
  const after = model.requests[3];
  expect(after?.messages).toHaveLength(1);
  const body = JSON.stringify(after?.messages[0]);
  expect(body).toContain('produce output');
  expect(body).toContain('SUMMARY: read two blobs');
  // The latest tool result survives compaction as text; nothing of the compaction instruction leaks.
  expect(body).toContain('second:xxx');
  expect(body).not.toContain(COMPACTION_INSTRUCTION.slice(0, 40));
});

test('a conversation growing past its byte bound is compacted, so it always fits one payload', async () => {
  // 6 KB per tool output and a 20 KB bound: compaction is due after the fourth output.
  const steps: ScriptStep[] = blobScript(4, 6000).slice(0, 4);
  steps.push(text('SUMMARY: four blobs read.'));
  steps.push(text('finished small'));
  const model = new ScriptedModel(steps);
  const result = await withWorker(suite.env, { model, deps: { tools: registryWithBlob() } }, async (tq) =>
    (await start(tq, { compactAtBytes: 20_000 })).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'finished small', iterations: 5 });
  const compaction = model.requests[4];
  expect(compaction?.toolChoice).toEqual({ type: 'none' });
  expect(JSON.stringify(compaction?.messages.at(-1))).toContain('nearing the limit of your context window');
  const after = model.requests[5];
  expect(after?.messages).toHaveLength(1);
  expect(JSON.stringify(after?.messages).length).toBeLessThan(20_000);
  expect(JSON.stringify(after?.messages)).toContain('SUMMARY: four blobs read.');
});

describe('sticky activities', () => {
  test('without eager dispatch, a call that misses the cache pins the run to the worker holding its conversation', async () => {
    const model = new ScriptedModel(blobScript(6, 200));
    const id = newId('pin');
    const taskQueue = `pin-${Date.now()}`;
    const tools = registryWithBlob();
    // Two workers, each with its own conversation cache, and no eager dispatch: every call goes
    // through matching, so until the run pins, a delta call lands on either worker.
    const noEager = { maxEagerActivityReservationsPerWorkflowTask: 0 };
    const second = await NativeConnection.connect({ address: testAddress() });
    try {
      const common = { model, taskQueue, stickyActivities: true, workerOptions: noEager };
      const result = await withWorker(suite.env, { ...common, deps: { tools } }, () =>
        withWorker(suite.env, { ...common, deps: { tools }, connection: second }, () =>
          start(taskQueue, {}, id).then((h) => h.result()),
        ),
      );
      expect(result).toMatchObject({ exitReason: 'completed', iterations: 7 });
    } finally {
      await second.close();
    }
    expectFullConversations(model.requests);
    const events = (await suite.env.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    const missAt = events.findIndex(
      (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === CACHE_MISS_ERROR_TYPE,
    );
    const misses = events.filter(
      (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === CACHE_MISS_ERROR_TYPE,
    );
    // At most one miss: the call after it goes in full, and every later one to one worker's own queue.
    expect(misses.length).toBeLessThanOrEqual(1);
    if (missAt >= 0) {
      const later = events
        .slice(missAt)
        .map((e) => e.activityTaskScheduledEventAttributes)
        .filter((a) => a && baseActivityName(a.activityType?.name ?? '') === 'callModel');
      const queues = later.slice(1).map((a) => a!.taskQueue?.name ?? '');
      expect(queues.length).toBeGreaterThan(0);
      expect(new Set(queues).size).toBe(1);
      expect(queues[0]?.startsWith(`${taskQueue}@`)).toBe(true);
    }
  }, 90_000);

  test('when the worker holding a run goes away, the run goes on on another worker and completes', async () => {
    const model = new ScriptedModel(blobScript(5, 200));
    const id = newId('sticky-gone');
    const taskQueue = `sticky-gone-${Date.now()}`;
    const tools = registryWithBlob();
    // First worker: runs the first iterations, then leaves for good (its own queue goes quiet).
    await withWorker(suite.env, { model, deps: { tools }, taskQueue, stickyActivities: true }, async () => {
      const handle = await start(taskQueue, {}, id);
      for (;;) {
        const state = await handle.query(stateQuery);
        if (state.iteration >= 2) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    const { result, page } = await withWorker(
      suite.env,
      { model, deps: { tools }, taskQueue, stickyActivities: true },
      async () => ({
        result: await suite.env.client.workflow.getHandle<typeof agentWorkflow>(id).result(),
        page: await suite.env.client.workflow.getHandle(id).query(eventsQuery, { after: 0 }),
      }),
    );
    expect(result).toMatchObject({ exitReason: 'completed', iterations: 6 });
    expectFullConversations(model.requests);
    // The second worker did not hold the conversation: at most one call missed its cache (then the
    // run pinned its calls to that worker's queue), or the worker that left said it stopped mid-call.
    const history = await suite.env.client.workflow.getHandle(id).fetchHistory();
    const misses = (history.events ?? []).filter(
      (e) => e.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type === CACHE_MISS_ERROR_TYPE,
    );
    expect(misses.length).toBeLessThanOrEqual(1);
    expect(page.events.filter((e) => e.kind === 'notice' && /did not take the call/.test(e.message))).toEqual([]);
  }, 90_000);
});
