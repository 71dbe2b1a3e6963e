import { NativeConnection, Worker } from '@temporalio/worker';
import type { ModelProvider } from '../../src/models/types';
import { approveToolUpdate, stateQuery, type ModelResponse } from '../../src/shared';
import { loadRecordedHistories } from '../support/recorded-histories';
import { inThreads, quietRuntime, testAddress, uniqueQueue } from '../support/temporal';
import { useTraceSuite, waitFor } from './trace-suite';

/**
 * Tracing never changes what a run does and never repeats itself: a replaying worker emits nothing
 * new, and what runs on a live worker only (queries, update validators) draws no span ids.
 */
const t = useTraceSuite();

/** A model whose calls wait for the test: each call takes the next gate and answers when it opens. */
class GatedModel implements ModelProvider {
  readonly name = 'gated';
  calls = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly answers: Array<Omit<ModelResponse, 'id' | 'model' | 'usage'>>) {}
  get pending(): number {
    return this.waiting.length;
  }
  release(): void {
    this.waiting.shift()?.();
  }
  async call(_request: unknown, ctx: { signal: AbortSignal }): Promise<ModelResponse> {
    const n = this.calls++;
    await new Promise<void>((resolve, reject) => {
      this.waiting.push(resolve);
      ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
    const answer = this.answers[Math.min(n, this.answers.length - 1)]!;
    return {
      id: `msg_${n}`,
      model: 'scripted-test',
      usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      ...answer,
    };
  }
}

test('a query mid-run and a worker restart (replay) add no duplicate span and break no parent link', async () => {
  const telemetry = t.telemetryFor();
  const taskQueue = uniqueQueue('otel-replay');
  const id = `otel-replay-${Date.now()}`;
  const toolTurn = {
    content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'write_file', input: { path: 'x.txt', content: 'x' } }],
    stopReason: 'tool_use' as const,
  };
  // First worker keeps the run cached: a query is answered by the live workflow, between its activations.
  const first = new GatedModel([toolTurn, toolTurn]);
  const w1 = await t.worker(telemetry, first, taskQueue);
  const handle = await t.start(taskQueue, id);
  const running = w1.run();
  await waitFor(() => first.pending === 1);
  // An update its validator rejects and queries: both run on the live worker only, never on replay.
  await expect(handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_nope' }] })).rejects.toThrow();
  for (let i = 0; i < 3; i++) expect((await handle.query(stateQuery)).status).toBe('running');
  first.release();
  // The next model call is scheduled after the queries; the worker stops while it waits.
  await waitFor(() => first.pending === 1 && first.calls === 2);
  w1.shutdown();
  await running;

  // A second worker replays the whole history on every task (no cache) and finishes the run.
  const second = new GatedModel([{ content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn' }]);
  const connection = await NativeConnection.connect({ address: testAddress() });
  try {
    const w2 = await t.worker(telemetry, second, taskQueue, { connection, maxCachedWorkflows: 0 });
    const result = await w2.runUntil(async () => {
      await waitFor(() => second.pending === 1);
      expect((await handle.query(stateQuery)).status).toBe('running');
      second.release();
      return handle.result();
    });
    expect(result.exitReason).toBe('completed');
  } finally {
    await connection.close();
  }
  await t.flushed(telemetry);

  const ids = t.receiver.spans.map((s) => s.spanId);
  expect(new Set(ids).size).toBe(ids.length);
  expect(new Set(t.receiver.spans.map((s) => s.traceId)).size).toBe(1);
  t.one('RunWorkflow:agentWorkflow');
  t.one('invoke_agent durable-agent');
  // One StartActivity span per activity the history scheduled, however often the run was replayed.
  const history = await handle.fetchHistory();
  const scheduled = (type: string) =>
    (history.events ?? []).filter((e) =>
      [type, `durableAgent.${type}`].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
    ).length;
  expect(scheduled('callModel')).toBeGreaterThanOrEqual(2);
  expect(t.named('StartActivity:durableAgent.callModel')).toHaveLength(scheduled('callModel'));
  expect(t.named('StartActivity:durableAgent.runTool')).toHaveLength(scheduled('runTool'));
  expect(t.named('HandleQuery')).toHaveLength(0);
  expect(t.named('ValidateUpdate')).toHaveLength(0);
  // Every span's parent arrived: a span id drawn differently on the live worker and on replay would leave orphans.
  for (const span of t.receiver.spans) expect(t.ancestry(span).at(-1) ?? span.name).toBe('RunWorkflow:agentWorkflow');
  // Model calls that answered: the first on worker one, the last on worker two (the call cut by the shutdown failed).
  const answered = t.named('chat ').filter((s) => s.attributes['error.type'] === undefined);
  expect(answered).toHaveLength(2);

  // The history replays with tracing on, and a replay emits nothing.
  const before = t.receiver.spans.length;
  quietRuntime();
  await Worker.runReplayHistory(
    inThreads({ workflowBundle: { codePath: t.otelBundle }, ...telemetry.workerOptions(true) }),
    history,
    id,
  );
  await telemetry.forceFlush();
  expect(t.receiver.spans.length).toBe(before);
}, 120_000);

test('recorded histories (runs started without tracing) replay with tracing on', async () => {
  const histories = await loadRecordedHistories();
  expect(histories.length).toBeGreaterThan(0);
  const telemetry = t.telemetryFor();
  const failures: string[] = [];
  for await (const r of Worker.runReplayHistories(
    inThreads({ workflowBundle: { codePath: t.otelBundle }, ...telemetry.workerOptions(true) }),
    histories,
  )) {
    if (r.error) failures.push(`${r.workflowId}: ${String(r.error)}`);
  }
  expect(failures).toEqual([]);
  await telemetry.forceFlush();
  expect(t.receiver.spans).toEqual([]);
});
