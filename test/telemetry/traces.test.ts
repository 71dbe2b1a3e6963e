import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { NativeConnection, Worker } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { ModelProvider } from '../../src/models/types';
import { WORKFLOW_TYPE, approveToolUpdate, stateQuery, type ModelResponse } from '../../src/shared';
import { createTelemetry, type Telemetry, type TelemetryOptions } from '../../src/telemetry';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import {
  connectTestEnv,
  quietRuntime,
  tempWorkspace,
  testAddress,
  uniqueQueue,
  type TestEnv,
} from '../support/temporal';
import { buildOtelBundle } from './otel-bundle';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver';

let env: TestEnv;
let receiver: OtlpReceiver;
/** The workflow bundle with the tracing interceptors, as `npm run build` writes `workflow-bundle-otel.js`. */
let otelBundle: string;
let workspace: string;
const telemetries: Telemetry[] = [];

beforeAll(async () => {
  env = await connectTestEnv();
  receiver = await startOtlpReceiver();
  otelBundle = await buildOtelBundle();
}, 180_000);
afterAll(async () => {
  await Promise.all(telemetries.map((t) => t.shutdown()));
  await receiver?.close();
  await env?.close();
});
beforeEach(async () => {
  workspace = await tempWorkspace('otel');
  receiver.spans.length = 0;
  receiver.traceEncodings.length = 0;
  receiver.metrics.clear();
});

function telemetryFor(options: Partial<TelemetryOptions> = {}): Telemetry {
  const t = createTelemetry({
    tracesUrl: `${receiver.url}/v1/traces`,
    metricsUrl: `${receiver.url}/v1/metrics`,
    serviceName: 'otel-test',
    spanExportDelayMs: 50,
    ...options,
  });
  telemetries.push(t);
  return t;
}

async function worker(
  telemetry: Telemetry,
  model: ModelProvider,
  taskQueue: string,
  extra: { connection?: NativeConnection; maxCachedWorkflows?: number } = {},
) {
  return createAgentWorker({
    connection: extra.connection ?? env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: otelBundle,
    deps: { models: () => model, tools: createDefaultRegistry() },
    stickyActivities: false,
    telemetry,
    shutdownGraceTime: 200,
    ...(extra.maxCachedWorkflows !== undefined
      ? { workerOptions: { maxCachedWorkflows: extra.maxCachedWorkflows } }
      : {}),
  });
}

function start(taskQueue: string, id: string) {
  return env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: id,
    args: [{ prompt: 'take notes', model: 'scripted-test', workspace }],
  });
}

const named = (prefix: string) => receiver.spans.filter((s) => s.name.startsWith(prefix));
const one = (name: string): ReceivedSpan => {
  const found = receiver.spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
};

/** Flushes and waits until the spans the run's end exports (its `RunWorkflow`) have arrived. */
async function flushed(telemetry: Telemetry): Promise<void> {
  for (let i = 0; i < 100 && !receiver.spans.some((s) => s.name === 'RunWorkflow:agentWorkflow'); i++) {
    await telemetry.forceFlush();
    await new Promise((r) => setTimeout(r, 50));
  }
  await telemetry.forceFlush();
}

/** The names on the way from a span up to its trace's root; throws when a parent never arrived. */
function ancestry(span: ReceivedSpan): string[] {
  const byId = new Map(receiver.spans.map((s) => [s.spanId, s]));
  const names: string[] = [];
  for (let s: ReceivedSpan | undefined = span; s?.parentSpanId;) {
    const parent = byId.get(s.parentSpanId);
    if (!parent) throw new Error(`span '${s.name}' has a parent ${s.parentSpanId} that was never exported`);
    names.push(parent.name);
    s = parent;
  }
  return names;
}

test('a run with tools is one trace: invoke_agent, chat per model call, execute_tool per tool call (protobuf)', async () => {
  const telemetry = telemetryFor();
  const model = new ScriptedModel([
    toolUse(
      [
        { id: 'toolu_w', name: 'write_file', input: { path: 'notes.txt', content: 'secret plan\n' } },
        { id: 'toolu_g', name: 'glob', input: { pattern: '**/*.md' } },
      ],
      { usage: { inputTokens: 120, outputTokens: 30 } },
    ),
    text('Noted.', { usage: { inputTokens: 200, outputTokens: 7 } }),
  ]);
  const taskQueue = uniqueQueue('otel');
  const id = `otel-tools-${Date.now()}`;
  const w = await worker(telemetry, model, taskQueue);
  const result = await w.runUntil(async () => (await start(taskQueue, id)).result());
  expect(result.exitReason).toBe('completed');
  await flushed(telemetry);

  expect(receiver.traceEncodings.every((e) => e === 'protobuf')).toBe(true);
  expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1);
  expect(new Set(receiver.spans.map((s) => s.service))).toEqual(new Set(['otel-test']));

  const agent = one('invoke_agent durable-agent');
  expect(agent.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'durable-agent',
    'gen_ai.conversation.id': id,
    'gen_ai.request.model': 'scripted-test',
    'durable_agent.exit_reason': 'completed',
    'gen_ai.usage.input_tokens':
      result.usage.inputTokens + result.usage.cacheReadInputTokens + result.usage.cacheCreationInputTokens,
    'gen_ai.usage.output_tokens': result.usage.outputTokens,
  });
  expect(ancestry(agent)).toEqual(['RunWorkflow:agentWorkflow']);
  // Workflow spans carry the run's identity, not the whole WorkflowInfo (whose lastResult can hold an answer).
  expect(Object.keys(one('RunWorkflow:agentWorkflow').attributes).sort()).toEqual(
    ['attempt', 'namespace', 'runId', 'taskQueue', 'workflowId', 'workflowType'].sort(),
  );

  const chats = named('chat ');
  expect(chats.map((s) => s.name)).toEqual(['chat scripted-test', 'chat scripted-test']);
  const byFinish = (reason: string) =>
    chats.find((s) => (s.attributes['gen_ai.response.finish_reasons'] as string[])[0] === reason)!;
  expect(byFinish('tool_use').attributes).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'scripted-test',
    'gen_ai.usage.input_tokens': 120,
    'gen_ai.usage.output_tokens': 30,
    'gen_ai.conversation.id': id,
  });
  expect(byFinish('end_turn').attributes).toMatchObject({
    'gen_ai.usage.input_tokens': 200,
    'gen_ai.usage.output_tokens': 7,
  });

  const tools = named('execute_tool ').sort((a, b) => a.name.localeCompare(b.name));
  expect(tools.map((s) => [s.name, s.attributes['gen_ai.tool.name'], s.attributes['gen_ai.tool.call.id']])).toEqual([
    ['execute_tool glob', 'glob', 'toolu_g'],
    ['execute_tool write_file', 'write_file', 'toolu_w'],
  ]);
  for (const span of [...chats, ...tools]) {
    expect(ancestry(span)).toContain('invoke_agent durable-agent');
    // Content is opt-in: nothing of the prompt, the answer or the tool's input is on a span.
    expect(JSON.stringify(span.attributes)).not.toMatch(/secret plan|take notes|Noted\./);
  }

  await waitFor(
    () => receiver.metrics.has('gen_ai.client.token.usage'),
    () => telemetry.forceFlush(),
  );
  expect([...receiver.metrics.keys()]).toEqual(
    expect.arrayContaining([
      'gen_ai.client.token.usage',
      'gen_ai.client.operation.duration',
      'durable_agent.tool.duration',
    ]),
  );
});

test('with http/json and the content opt-in, spans carry the prompt, the answer and the tool calls', async () => {
  const telemetry = telemetryFor({ protocol: 'http/json', content: true });
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_r', name: 'write_file', input: { path: 'a.txt', content: 'alpha' } }]),
    text('All written.'),
  ]);
  const taskQueue = uniqueQueue('otel-json');
  const w = await worker(telemetry, model, taskQueue);
  await w.runUntil(async () => (await start(taskQueue, `otel-json-${Date.now()}`)).result());
  await flushed(telemetry);

  expect(receiver.traceEncodings.length).toBeGreaterThan(0);
  expect(receiver.traceEncodings.every((e) => e === 'json')).toBe(true);
  const chats = named('chat ');
  expect(chats.some((s) => String(s.attributes['gen_ai.input.messages']).includes('take notes'))).toBe(true);
  expect(chats.some((s) => String(s.attributes['gen_ai.output.messages']).includes('All written.'))).toBe(true);
  const tool = one('execute_tool write_file');
  expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
    path: 'a.txt',
    content: 'alpha',
  });
  expect(String(tool.attributes['gen_ai.tool.call.result'])).toMatch(/a\.txt/);
});

test('a run that continues as new stays one trace: each execution an invoke_agent span under the previous one', async () => {
  const telemetry = telemetryFor();
  const turns = 8;
  const model = new ScriptedModel([
    ...Array.from({ length: turns }, (_, i) =>
      toolUse([{ id: `toolu_${i}`, name: 'write_file', input: { path: `f${i}.txt`, content: `${i}` } }]),
    ),
    text('all written'),
  ]);
  const taskQueue = uniqueQueue('otel-can');
  const id = `otel-can-${Date.now()}`;
  const w = await worker(telemetry, model, taskQueue);
  const result = await w.runUntil(async () => {
    const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: id,
      args: [{ prompt: 'write files', model: 'scripted-test', workspace, continueAsNewAfter: { events: 50 } }],
    });
    await handle.result();
    return env.client.workflow.getHandle<typeof agentWorkflow>(id).result();
  });
  expect(result).toMatchObject({ exitReason: 'completed', iterations: turns + 1 });
  await waitFor(
    () => named('invoke_agent').some((s) => s.attributes['durable_agent.exit_reason'] === 'completed'),
    () => telemetry.forceFlush(),
  );
  await telemetry.forceFlush();

  const executions = named('RunWorkflow:agentWorkflow');
  expect(executions.length).toBeGreaterThanOrEqual(2);
  expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1);
  const agents = named('invoke_agent');
  expect(agents).toHaveLength(executions.length);
  expect(agents.filter((s) => s.attributes['durable_agent.continued_as_new'] === true)).toHaveLength(
    executions.length - 1,
  );
  expect(new Set(agents.map((s) => s.attributes['durable_agent.run_id'])).size).toBe(executions.length);
  expect(named('ContinueAsNew:agentWorkflow')).toHaveLength(executions.length - 1);
  // One root: every later execution hangs under the previous one's ContinueAsNew span.
  expect(receiver.spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual(['RunWorkflow:agentWorkflow']);
  for (const span of receiver.spans) ancestry(span);
  expect(named('execute_tool write_file')).toHaveLength(turns);
}, 120_000);

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

async function waitFor(predicate: () => boolean, poke: () => unknown = () => {}, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await poke();
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a query mid-run and a worker restart (replay) add no duplicate span and break no parent link', async () => {
  const telemetry = telemetryFor();
  const taskQueue = uniqueQueue('otel-replay');
  const id = `otel-replay-${Date.now()}`;
  const toolTurn = {
    content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'write_file', input: { path: 'x.txt', content: 'x' } }],
    stopReason: 'tool_use' as const,
  };
  // First worker keeps the run cached: a query is answered by the live workflow, between its activations.
  const first = new GatedModel([toolTurn, toolTurn]);
  const w1 = await worker(telemetry, first, taskQueue);
  const handle = await start(taskQueue, id);
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
    const w2 = await worker(telemetry, second, taskQueue, { connection, maxCachedWorkflows: 0 });
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
  await flushed(telemetry);

  const ids = receiver.spans.map((s) => s.spanId);
  expect(new Set(ids).size).toBe(ids.length);
  expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1);
  one('RunWorkflow:agentWorkflow');
  one('invoke_agent durable-agent');
  // One StartActivity span per activity the history scheduled, however often the run was replayed.
  const history = await handle.fetchHistory();
  const scheduled = (type: string) =>
    (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
  expect(scheduled('callModel')).toBeGreaterThanOrEqual(2);
  expect(named('StartActivity:callModel')).toHaveLength(scheduled('callModel'));
  expect(named('StartActivity:runTool')).toHaveLength(scheduled('runTool'));
  expect(named('HandleQuery')).toHaveLength(0);
  expect(named('ValidateUpdate')).toHaveLength(0);
  // Every span's parent arrived: a span id drawn differently on the live worker and on replay would leave orphans.
  for (const span of receiver.spans) expect(ancestry(span).at(-1) ?? span.name).toBe('RunWorkflow:agentWorkflow');
  // Model calls that answered: the first on worker one, the last on worker two (the call cut by the shutdown failed).
  const answered = named('chat ').filter((s) => s.attributes['error.type'] === undefined);
  expect(answered).toHaveLength(2);

  // The history replays with tracing on, and a replay emits nothing.
  const before = receiver.spans.length;
  quietRuntime();
  await Worker.runReplayHistory(
    { workflowBundle: { codePath: otelBundle }, ...telemetry.workerOptions(true) },
    history,
    id,
  );
  await telemetry.forceFlush();
  expect(receiver.spans.length).toBe(before);
}, 120_000);

test('recorded histories (runs started without tracing) replay with tracing on', async () => {
  const dir = path.join(__dirname, '..', 'histories');
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.json'));
  expect(files.length).toBeGreaterThan(0);
  const telemetry = telemetryFor();
  const histories = await Promise.all(
    files.map(async (f) => ({
      workflowId: f,
      history: historyFromJSON(JSON.parse(await fs.readFile(path.join(dir, f), 'utf8'))),
    })),
  );
  const failures: string[] = [];
  for await (const r of Worker.runReplayHistories(
    { workflowBundle: { codePath: otelBundle }, ...telemetry.workerOptions(true) },
    histories,
  )) {
    if (r.error) failures.push(`${r.workflowId}: ${String(r.error)}`);
  }
  expect(failures).toEqual([]);
  await telemetry.forceFlush();
  expect(receiver.spans).toEqual([]);
});
