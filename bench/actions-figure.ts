import type { WorkflowHandle } from '@temporalio/client';
import { ScriptedModel, text, toolUse, type ScriptedFunction } from '../src/models/scripted';
import { startRun } from '../src/client';
import type { AgentRunInput } from '../src/shared';
import { createBashTool, createReadFileTool, ToolRegistry } from '../src/tools';
import { actionsWorker, countActions, patchUpserts, totalOf, type ActionCounts } from './actions-metrics';
import { measureStreamedActions, type StreamedRow } from './actions-stream';
import { formatInterruptLatency, measureInterruptLatency, type InterruptRow } from './actions-interrupt';
import { measureOneCallActions, type OneCallRow } from './actions-mcp';
import { settle, uniqueName, type BenchContext } from './context';
import type { NaiveRunInput } from './naive-workflow';
import { BENCH_MODEL, benchDocPath, writeBenchDoc } from './scenario';
import { createBenchWorker, withWorkers, type BenchWorker } from './workers';

/**
 * Billable actions per iteration (issue 19 item 2), counted by the Temporal server's own `action`
 * metric, by action type: a 20-iteration `read_file` loop and a 20-iteration `bash` loop, ours
 * (`agentWorkflow` on the production worker) and the naive activity-per-step loop making the same
 * calls, a run with one MCP call against one with one `read_file` call (`actions-mcp.ts`), one
 * 20-second streamed model call followed live (`actions-stream.ts`), and how late an interrupt
 * stops that call (`actions-interrupt.ts`).
 *
 *   npm run bench -- --only=actions
 */
export const ACTIONS_COMMAND = 'npm run bench -- --only=actions';

export const LOOP_ITERATIONS = 20;
const DOC_BYTES = 256;
const BASH_COMMAND = 'echo durable';

export type LoopTool = 'read_file' | 'bash';

export interface LoopRow {
  subject: 'ours' | 'naive';
  tool: LoopTool;
  iterations: number;
  total: number;
  perIteration: number;
  byType: ActionCounts;
  /** Of the upserts: the SDK's `TemporalChangeVersion` writes, one per `patched()` flag (ours only). */
  patchUpserts: number;
}

export interface ActionsFigure {
  loops: LoopRow[];
  streamed: StreamedRow[];
  /** A run with one MCP tool call against one with one `read_file` call. */
  oneCall: OneCallRow[];
  /** What the streamed call's fewer heartbeats must not cost: interrupt latency. */
  interrupts: InterruptRow[];
}

/** Each call asks for the run's tool once; at the iteration limit the closing summary answers. */
function loopModel(tool: LoopTool, calls: number): ScriptedModel {
  const step: ScriptedFunction = (request) => {
    model.requests.length = 0;
    const usage = { inputTokens: 1_000, outputTokens: 40 };
    if (request.toolChoice?.type === 'none') return text('Summary: done.', { usage });
    const call =
      tool === 'read_file'
        ? { name: 'read_file', input: { path: benchDocPath(DOC_BYTES) } }
        : { name: 'bash', input: { command: BASH_COMMAND } };
    return toolUse([call], { text: 'Next.', usage });
  };
  const model: ScriptedModel = new ScriptedModel(new Array(calls).fill(step));
  return model;
}

function loopRegistry(): ToolRegistry {
  return new ToolRegistry([createReadFileTool(), createBashTool()]);
}

/** One run of each loop, one at a time (the server's counters are global), after a warm-up run of each. */
export async function measureLoopActions(ctx: BenchContext, metricsUrl: string): Promise<LoopRow[]> {
  await writeBenchDoc(ctx.workspace, DOC_BYTES);
  const rows: LoopRow[] = [];
  for (const tool of ['read_file', 'bash'] as const) {
    for (const subject of ['ours', 'naive'] as const) {
      const taskQueue = uniqueName(`actions-${subject}-${tool}`);
      const model = loopModel(tool, 2 * (LOOP_ITERATIONS + 1) + 4);
      const worker = await loopWorker(ctx, subject, taskQueue, model);
      await withWorkers([worker], async () => {
        await runLoop(ctx, subject, tool, taskQueue); // warm-up: caches, sandbox detection, first connections
        const { value: handle, actions } = await countActions(metricsUrl, () => runLoop(ctx, subject, tool, taskQueue));
        const total = totalOf(actions);
        rows.push({
          subject,
          tool,
          iterations: LOOP_ITERATIONS,
          total,
          perIteration: total / LOOP_ITERATIONS,
          byType: actions,
          patchUpserts: await patchUpserts(handle),
        });
        ctx.log(
          `actions: ${subject} ${tool} loop: ${total} actions, ${(total / LOOP_ITERATIONS).toFixed(2)} per iteration`,
        );
      });
    }
  }
  return rows;
}

async function loopWorker(
  ctx: BenchContext,
  subject: 'ours' | 'naive',
  taskQueue: string,
  model: ScriptedModel,
): Promise<BenchWorker> {
  if (subject === 'naive') {
    return createBenchWorker({
      connection: ctx.connection,
      taskQueue,
      bundlePath: ctx.bundlePath,
      subject,
      model,
      workspace: ctx.workspace,
      eager: true,
      tools: loopRegistry(),
    });
  }
  return actionsWorker(ctx, taskQueue, model, { tools: loopRegistry() });
}

async function runLoop(ctx: BenchContext, subject: 'ours' | 'naive', tool: LoopTool, taskQueue: string) {
  const prompt = `Call ${tool} again and again.`;
  const workflowId = uniqueName(`actions-${subject}-${tool}`);
  let handle: WorkflowHandle;
  if (subject === 'ours') {
    const input: AgentRunInput = { prompt, model: BENCH_MODEL, maxIterations: LOOP_ITERATIONS, tools: [tool] };
    // As the CLI starts it: the client helper, which sets the search attributes at start.
    handle = await startRun(ctx.client, input, { workflowId, taskQueue });
  } else {
    const input: NaiveRunInput = { prompt, model: BENCH_MODEL, maxIterations: LOOP_ITERATIONS };
    handle = await ctx.client.workflow.start('naiveAgentWorkflow', { taskQueue, workflowId, args: [input] });
  }
  const settled = await settle(handle, 120_000);
  if (!settled.ok) throw new Error(`actions: ${subject} ${tool} loop did not complete: ${settled.error}`);
  return handle;
}

export async function measureActions(ctx: BenchContext, metricsUrl: string): Promise<ActionsFigure> {
  const loops = await measureLoopActions(ctx, metricsUrl);
  const oneCall = await measureOneCallActions(ctx, metricsUrl);
  const streamed = await measureStreamedActions(ctx, metricsUrl);
  const interrupts = await measureInterruptLatency(ctx);
  return { loops, oneCall, streamed, interrupts };
}

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

function typesLine(byType: ActionCounts, per: number): string {
  return Object.entries(byType)
    .sort((a, b) => b[1] - a[1])
    .map(([type, n]) => `${type.replace(/^(grpc|command)_/, '')} ${fmt(n / per)}`)
    .join(', ');
}

export function formatActions(figure: ActionsFigure): string {
  const lines = [
    `Billable actions (the server's own \`action\` metric, by action type); reproduce: ${ACTIONS_COMMAND}`,
    `  ${LOOP_ITERATIONS}-iteration loops (one model call + one tool call per iteration, then the closing summary), per iteration:`,
  ];
  for (const row of figure.loops) {
    lines.push(
      `  ${row.subject.padEnd(5)} ${row.tool.padEnd(9)} ${fmt(row.perIteration).padStart(5)} /iteration ` +
        `(${row.total} in all): ${typesLine(row.byType, row.iterations)}` +
        (row.patchUpserts
          ? `; without patched()'s ${row.patchUpserts} upserts ${fmt((row.total - row.patchUpserts) / row.iterations)}`
          : ''),
    );
  }
  lines.push('  a run with one tool call, then the answer (whole run):');
  for (const row of figure.oneCall) {
    const label = row.call === 'mcp' ? 'one MCP call (stdio server, read-only tool)' : 'one read_file call';
    lines.push(
      `  ${label.padEnd(44)} ${String(row.total).padStart(3)} actions: ${typesLine(row.byType, 1)}` +
        (row.patchUpserts ? `; without patched()'s ${row.patchUpserts} upserts ${row.total - row.patchUpserts}` : ''),
    );
  }
  lines.push('  one streamed model call, followed live from its start to the result (whole run):');
  for (const row of figure.streamed) {
    lines.push(
      `  ${row.label.padEnd(44)} ${String(row.total).padStart(3)} actions: ${typesLine(row.byType, 1)}` +
        (row.patchUpserts ? `; without patched()'s ${row.patchUpserts} upserts ${row.total - row.patchUpserts}` : '') +
        `; text on screen ${row.lag.median} ms after the server wrote it (median), p90 ${row.lag.p90} ms, max ${row.lag.max} ms`,
    );
  }
  lines.push(...formatInterruptLatency(figure.interrupts));
  return lines.join('\n');
}
