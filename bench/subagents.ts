/**
 * The subagent figure (issue 22): what a `task` call costs.
 *
 * - wall time of a run whose one model turn starts 1 subagent, against one that starts 10 in
 *   parallel; each subagent makes one model call of a fixed latency (LATENCY_MS), so with enough
 *   parallelism 10 take about as long as 1;
 * - history bytes each subagent adds to its parent: (parent's history with 10 − with 1) / 9. The
 *   children's own histories are theirs (each a child workflow), not the parent's.
 *
 * The model is a fake with a fixed latency (no network). Needs the workflow side's `task` tool.
 * Alone: `npm run bench -- --only=subagents`.
 */
import { ScriptedModel, text, toolUse, type ScriptedFunction } from '../src/models/scripted';
import { DEFAULT_NAMESPACE, WORKFLOW_TYPE, type AgentRunInput, type ModelRequest } from '../src/shared';
import { TASK_TOOL_NAME } from '../src/shared/subagents';
import { createAgentWorker } from '../src/worker';
import { uniqueName, type BenchContext } from './context';
import { createBenchRegistry } from './scenario';
import { ms, table } from './stats';

export interface SubagentRow {
  subagents: number;
  wallMs: number;
  parentHistoryBytes: number;
  exitReason: string;
}

export interface SubagentFigure {
  latencyMs: number;
  rows: SubagentRow[];
  /** Parallel speed-up: wall time of 10 over wall time of 1 (1.0 = perfectly parallel). */
  tenOverOne: number;
  historyBytesPerSubagent: number;
}

const LATENCY_MS = 1000;
const PARENT_PROMPT = 'bench: start the subagents';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The parent asks for `count` task calls, then answers; every other request is a subagent's: a slow answer. */
function benchModel(count: number): ScriptedModel {
  const step: ScriptedFunction = async (request: ModelRequest) => {
    const first = request.messages[0];
    const isParent = first?.role === 'user' && first.content === PARENT_PROMPT;
    if (!isParent) {
      await sleep(LATENCY_MS);
      return text('subagent done');
    }
    const last = request.messages[request.messages.length - 1];
    const hasResults = Array.isArray(last?.content) && last.content.some((b) => b.type === 'tool_result');
    if (hasResults) return text('all subagents done');
    return toolUse(
      Array.from({ length: count }, (_, i) => ({
        name: TASK_TOOL_NAME,
        input: { prompt: `subagent ${i + 1}: answer at once`, description: `part ${i + 1}` },
      })),
    );
  };
  // One step per model call: the parent's two and each subagent's one.
  return new ScriptedModel(Array.from({ length: count + 2 }, () => step));
}

async function measureOne(ctx: BenchContext, count: number): Promise<SubagentRow> {
  const model = benchModel(count);
  const taskQueue = uniqueName('subagents');
  const worker = await createAgentWorker({
    connection: ctx.connection,
    namespace: DEFAULT_NAMESPACE,
    taskQueue,
    workflowBundlePath: ctx.bundlePath,
    deps: { models: () => model, tools: createBenchRegistry(), defaultWorkspace: ctx.workspace },
  });
  const input: AgentRunInput = {
    prompt: PARENT_PROMPT,
    model: 'scripted-bench',
    maxIterations: 4,
    maxSubagentDepth: 1,
  };
  const workflowId = uniqueName(`subagents-${count}`);
  return worker.runUntil(async () => {
    const started = performance.now();
    const handle = await ctx.client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId, args: [input] });
    const result = await handle.result();
    const wallMs = performance.now() - started;
    // Without the workflow side's task tool the calls fail as unknown tools and no child starts: no figure.
    const last = `${workflowId}.task-${count}`;
    await ctx.client.workflow
      .getHandle(last)
      .describe()
      .catch(() => {
        throw new Error(
          `no subagent run ${last}: this build's workflow does not start subagents with '${TASK_TOOL_NAME}'`,
        );
      });
    const described = await handle.describe();
    const bytes = Number(described.raw.workflowExecutionInfo?.historySizeBytes ?? 0);
    return { subagents: count, wallMs, parentHistoryBytes: bytes, exitReason: result.exitReason };
  });
}

export async function measureSubagents(ctx: BenchContext): Promise<SubagentFigure> {
  // A first run warms the worker's bundle load and the server's caches; not counted.
  await measureOne(ctx, 1);
  const one = await measureOne(ctx, 1);
  const ten = await measureOne(ctx, 10);
  for (const row of [one, ten]) {
    if (row.exitReason !== 'completed') throw new Error(`the ${row.subagents}-subagent run ended ${row.exitReason}`);
  }
  return {
    latencyMs: LATENCY_MS,
    rows: [one, ten],
    tenOverOne: ten.wallMs / one.wallMs,
    historyBytesPerSubagent: Math.round((ten.parentHistoryBytes - one.parentHistoryBytes) / 9),
  };
}

export function formatSubagentFigure(figure: SubagentFigure): string[] {
  return [
    `Subagents (each one model call of ${figure.latencyMs} ms; parent: one turn of task calls, then its answer)`,
    table([
      ['subagents', 'wall time', "parent's history"],
      ...figure.rows.map((r) => [String(r.subagents), ms(r.wallMs, 0), `${r.parentHistoryBytes} B`]),
    ]),
    `10 in parallel take ${figure.tenOverOne.toFixed(2)}× the time of 1; each subagent adds ` +
      `${figure.historyBytesPerSubagent} B to its parent's history`,
  ];
}
