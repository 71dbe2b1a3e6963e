/**
 * The MCP figure (issue 21): per-call cost of a durable MCP call against a direct call with the
 * official SDK client, on the same server program, in one process and one measurement:
 *
 * - direct: `Client.callTool` over its own stdio connection, call after call;
 * - direct, spaced: the same, one call every SPACED_GAP_MS, about as often as a run makes them:
 *   both processes sleep between calls, as they do in a run, and waking them costs time on its own;
 * - pooled: the worker's MCP runtime (pooled connection, result handling), no Temporal;
 * - durable: `mcp__bench__echo` called by a run of agentWorkflow, one call per iteration, timed
 *   from the activity's scheduling to its completion in history (what Temporal adds included);
 * - and, for scale, one activity round trip: the same run's model calls (the scripted model
 *   answers at once), timed the same way.
 *
 * The goal: a durable call costs at most one activity round trip more than a direct one, with no
 * process spawned per call (the pool opens one connection for the whole run).
 *
 * Alone: `npm run bench -- --only=mcp`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as path from 'node:path';
import { createMcpRuntime } from '../src/mcp';
import { baseActivityName } from '../src/shared/activity-names';
import { ScriptedModel, text, toolUse } from '../src/models/scripted';
import { DEFAULT_NAMESPACE, WORKFLOW_TYPE, type AgentRunInput } from '../src/shared';
import { createAgentWorker } from '../src/worker';
import { uniqueName, type BenchContext } from './context';
import { createBenchRegistry } from './scenario';
import { distribution, ms, table, type Distribution } from './stats';

export interface McpFigure {
  calls: number;
  direct: Distribution;
  /** Direct calls SPACED_GAP_MS apart, the cadence of a run's calls. */
  directSpaced: Distribution;
  pooled: Distribution;
  durable: Distribution;
  /** One activity round trip: the run's scripted model calls, schedule to completion. */
  activityRoundTrip: Distribution;
  /** Median durable minus median direct, spaced. */
  addedSpacedMs: number;
  /** Median durable minus median direct. */
  addedMedianMs: number;
  /** Server processes the worker's pool started for the whole run. */
  serverProcesses: number;
}

const WARMUP = 5;
/** Pause between spaced direct calls: about one durable call's round trip, so both sides idle alike. */
const SPACED_GAP_MS = 8;

export async function measureMcp(ctx: BenchContext): Promise<McpFigure> {
  const calls = ctx.quick ? 30 : 100;
  const server = { command: process.execPath, args: [path.join(__dirname, 'mcp-server.js')] };

  // Direct: the SDK client on its own connection.
  const client = new Client({ name: 'bench-direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport(server));
  const direct: number[] = [];
  for (let i = 0; i < WARMUP + calls; i++) {
    const started = performance.now();
    await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
    if (i >= WARMUP) direct.push(performance.now() - started);
  }
  const directSpaced: number[] = [];
  for (let i = 0; i < WARMUP + calls; i++) {
    await new Promise((resolve) => setTimeout(resolve, SPACED_GAP_MS));
    const started = performance.now();
    await client.callTool({ name: 'echo', arguments: { text: `spaced ${i}` } });
    if (i >= WARMUP) directSpaced.push(performance.now() - started);
  }
  await client.close();

  // Pooled: the runtime the worker uses, without Temporal.
  const pooledRuntime = createMcpRuntime({ workspaceConfig: false });
  const { servers } = await pooledRuntime.listForRun({
    runServers: { bench: server },
    workspace: ctx.workspace,
    network: false,
  });
  const listing = servers[0]!;
  const ref = {
    server: 'bench',
    tool: 'echo',
    source: 'run' as const,
    config: server,
    sideEffect: 'read_only' as const,
    toolsHash: listing.toolsHash,
  };
  const pooled: number[] = [];
  for (let i = 0; i < WARMUP + calls; i++) {
    const started = performance.now();
    await pooledRuntime.call(
      ref,
      { text: `call ${i}` },
      {
        workspace: ctx.workspace,
        network: false,
        toolUseId: `bench_${i}`,
        signal: new AbortController().signal,
        heartbeat: () => {},
        timeoutMs: 60_000,
      },
    );
    if (i >= WARMUP) pooled.push(performance.now() - started);
  }
  await pooledRuntime.close();

  // Durable: a run whose every iteration calls the tool once.
  const runtime = createMcpRuntime({ workspaceConfig: false });
  const model = new ScriptedModel([
    ...Array.from({ length: WARMUP + calls }, (_, i) =>
      toolUse([{ name: 'mcp__bench__echo', input: { text: `call ${i}` } }]),
    ),
    text('done'),
  ]);
  const taskQueue = uniqueName('mcp');
  const worker = await createAgentWorker({
    connection: ctx.connection,
    namespace: DEFAULT_NAMESPACE,
    taskQueue,
    workflowBundlePath: ctx.bundlePath,
    deps: { models: () => model, tools: createBenchRegistry(), defaultWorkspace: ctx.workspace, mcp: runtime },
  });
  const input: AgentRunInput = {
    prompt: 'echo',
    model: 'scripted-bench',
    maxIterations: WARMUP + calls + 1,
    mcpServers: { bench: server },
  };
  const workflowId = uniqueName('mcp');
  await worker.runUntil(async () => {
    const handle = await ctx.client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId, args: [input] });
    await handle.result();
  });
  const serverProcesses = runtime.pool.opened;
  await runtime.close();
  const timings = await activityTimings(ctx, workflowId);
  const durable = timings.runTool.slice(WARMUP);
  const modelCalls = timings.callModel.slice(WARMUP);
  const figure = {
    calls,
    direct: distribution(direct),
    directSpaced: distribution(directSpaced),
    pooled: distribution(pooled),
    durable: distribution(durable),
    activityRoundTrip: distribution(modelCalls),
    addedMedianMs: 0,
    addedSpacedMs: 0,
    serverProcesses,
  };
  figure.addedMedianMs = figure.durable.median - figure.direct.median;
  figure.addedSpacedMs = figure.durable.median - figure.directSpaced.median;
  return figure;
}

/** Per activity type, ms from each activity's scheduling to its completion, in history order. */
async function activityTimings(
  ctx: BenchContext,
  workflowId: string,
): Promise<{ runTool: number[]; callModel: number[] }> {
  const history = await ctx.client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, { type: string; at: number }>();
  const out = { runTool: [] as number[], callModel: [] as number[] };
  const time = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '', at: time(e.eventTime) });
    const c = e.activityTaskCompletedEventAttributes;
    if (c) {
      const from = scheduled.get(String(c.scheduledEventId));
      // Runs schedule the agent's activities as `durableAgent.<name>` (older ones: the bare name).
      const type = baseActivityName(from?.type ?? '');
      if (from && (type === 'runTool' || type === 'callModel')) out[type].push(time(e.eventTime) - from.at);
    }
  }
  return out;
}

export function formatMcpFigure(f: McpFigure): string[] {
  const row = (label: string, d: Distribution) => [label, String(d.n), ms(d.median), ms(d.p95), ms(d.mean)];
  return [
    `MCP call cost: ms per call of a read-only 'echo' tool on the same stdio server program, ${f.calls} calls each`,
    table([
      ['path', 'calls', 'median', 'p95', 'mean'],
      row('direct SDK client (Client.callTool)', f.direct),
      row(`direct SDK client, one call every ${SPACED_GAP_MS} ms`, f.directSpaced),
      row('worker MCP runtime, pooled (no Temporal)', f.pooled),
      row('durable: runTool activity, scheduled→completed', f.durable),
      row('one activity round trip (scripted model call)', f.activityRoundTrip),
    ]),
    `durable − direct (median): ${ms(f.addedMedianMs)} ms (spaced: ${ms(f.addedSpacedMs)} ms); ` +
      `activity round trip (median): ${ms(f.activityRoundTrip.median)} ms; ` +
      `server processes started for the run: ${f.serverProcesses}`,
  ];
}
