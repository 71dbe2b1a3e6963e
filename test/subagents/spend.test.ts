import { ApplicationFailure } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { ScriptedModel, delayed, fail, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import { eventsQuery, interruptSignal, type AgentRunResult } from '../../src/shared';
import { eventually, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('subagent-spend');

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const historyOf = async (workflowId: string) =>
  (await suite.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
/**
 * The bytes of every payload a history holds (inputs, results, signals, search attributes, memos):
 * what the workflow writes. Left out: the rest of each event, fixed-size but for the varints of its
 * timestamps and ids, and the SDK's note of when each local activity ran (JSON timestamps), which
 * differ between any two runs.
 */
function payloadBytes(value: unknown): number {
  if (value instanceof Uint8Array) return value.length;
  if (!value || typeof value !== 'object') return 0;
  let sum = 0;
  for (const [key, v] of Object.entries(value)) {
    if (key === 'markerRecordedEventAttributes')
      sum += payloadBytes((v as { details?: { result?: unknown } }).details?.result);
    else sum += payloadBytes(v);
  }
  return sum;
}
const signalsIn = (events: HistoryEvent[]) =>
  events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'durableAgent.subagentReport');

/** A child that makes `calls` model calls (a glob each, then its answer), each spending `usage`. */
function childScript(calls: number, usage: { inputTokens: number; outputTokens: number }): ScriptStep[] {
  return [
    ...Array.from({ length: calls - 1 }, (_, i) =>
      toolUse([{ id: `g${i}`, name: 'glob', input: { pattern: '*' } }], { usage }),
    ),
    text('child finished', { usage }),
  ];
}

/** A parent that starts one subagent and answers; its history, and the child's result. */
async function parentWithChild(calls: number, usage: { inputTokens: number; outputTokens: number }) {
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: work' } }], { usage: { inputTokens: 1_000 } }),
    text('Parent done.', { usage: { inputTokens: 1_000 } }),
  ]);
  const child = new ScriptedModel(childScript(calls, usage));
  return withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['glob', 'task'], maxSubagentDepth: 1 });
    const result = await handle.result();
    const childResult: AgentRunResult = await suite.env.client.workflow
      .getHandle(`${handle.workflowId}.task-1`)
      .result();
    const events = await historyOf(handle.workflowId);
    return { result, childResult, events, bytes: payloadBytes(events) };
  });
}

test("without a budget a subagent adds the same events and bytes to its parent's history whether it makes 2 model calls or 20", async () => {
  // Both children spend 200 input and 20 output tokens in all, so the trees' totals are the same.
  const short = await parentWithChild(2, { inputTokens: 100, outputTokens: 10 });
  const long = await parentWithChild(20, { inputTokens: 10, outputTokens: 1 });
  for (const run of [short, long]) {
    expect(run.result.exitReason).toBe('completed');
    // The parent's totals count the whole tree: its two calls and every call of the child.
    expect(run.result.usage.inputTokens).toBe(2_000 + 200);
    expect(run.result.usage.outputTokens).toBe(20);
    // No report per model call travels to the parent.
    expect(signalsIn(run.events)).toEqual([]);
  }
  expect(long.childResult.iterations).toBe(20);
  expect(short.childResult.iterations).toBe(2);
  expect(long.events.map((e) => e.eventType)).toEqual(short.events.map((e) => e.eventType));
  // The only payload bytes that depend on the child are its result's (here its `iterations`).
  const resultBytes = (r: AgentRunResult) => JSON.stringify(r).length;
  expect(long.bytes - short.bytes).toBe(resultBytes(long.childResult) - resultBytes(short.childResult));
});

test('an interrupted parent counts what its cancelled subagent spent before the cancel', async () => {
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: spend then wait' } }], {
      usage: { inputTokens: 1_000 },
    }),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'g1', name: 'glob', input: { pattern: '*' } }], { usage: { inputTokens: 300, outputTokens: 7 } }),
    delayed(120_000, text('never')),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['glob', 'task'] });
    const childId = `${handle.workflowId}.task-1`;
    await eventually(
      async () =>
        (
          await suite.env.client.workflow
            .getHandle(childId)
            .query(eventsQuery, { after: 0 })
            .catch(() => undefined)
        )?.events ?? [],
      (events) => expect(events.filter((e) => e.kind === 'model_call_started')).toHaveLength(2),
    );
    // Without a budget the parent has not heard of the child's first call yet.
    expect((await waitForState(handle, () => true)).usage.inputTokens).toBe(1_000);
    await handle.signal(interruptSignal, { reason: 'stop' });
    const result = await handle.result();
    expect(result.exitReason).toBe('interrupted');
    expect(result.usage.inputTokens).toBe(1_300);
    expect(result.usage.outputTokens).toBe(7);
    expect((await suite.env.client.workflow.getHandle(childId).describe()).status.name).toBe('CANCELLED');
    // One report: the cancelled child's last word.
    expect(signalsIn(await historyOf(handle.workflowId))).toHaveLength(1);
  });
});

test('a subagent that fails after spending still counts in its parent', async () => {
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: spend then fail' } }], {
      usage: { inputTokens: 1_000 },
    }),
    text('Recovered.', { usage: { inputTokens: 1_000 } }),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'g1', name: 'glob', input: { pattern: '*' } }], { usage: { inputTokens: 400, outputTokens: 3 } }),
    fail(ApplicationFailure.create({ type: 'ModelError.BadRequest', message: 'bad request', nonRetryable: true })),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['glob', 'task'] });
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    expect(result.usage.inputTokens).toBe(2_400);
    expect(result.usage.outputTokens).toBe(3);
    expect((await suite.env.client.workflow.getHandle(`${handle.workflowId}.task-1`).describe()).status.name).toBe(
      'FAILED',
    );
    expect(signalsIn(await historyOf(handle.workflowId))).toEqual([]);
  });
});

test("with a budget the parent's state counts a subagent's calls while it still runs", async () => {
  // claude-haiku-4-5: 1 USD per million input tokens.
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: spend then wait' } }], {
      usage: { inputTokens: 100_000 },
    }),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'g1', name: 'glob', input: { pattern: '*' } }], { usage: { inputTokens: 50_000 } }),
    delayed(120_000, text('never')),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { model: 'claude-haiku-4-5', maxBudgetUsd: 10, tools: ['glob', 'task'] });
    const state = await waitForState(handle, (s) => s.usage.inputTokens === 150_000);
    expect(state.costUsd).toBeCloseTo(0.15, 6);
    await handle.signal(interruptSignal, { reason: 'stop' });
    const result = await handle.result();
    expect(result.usage.inputTokens).toBe(150_000);
  });
});
