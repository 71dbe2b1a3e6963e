/**
 * The subagent figure (issue 22): what a `task` call costs.
 *
 * - wall time of a run whose one model turn starts 1 subagent, against one that starts 10 in
 *   parallel; each subagent makes model calls of a fixed latency (LATENCY_MS), so with enough
 *   parallelism 10 take about as long as 1;
 * - history each subagent adds to its parent: (parent's history with 10 − with 1) / 9, for
 *   subagents of 1 model call and of 10 (goal: the same; the children's own histories are theirs);
 * - billable actions (the server's `action` counter, as bench/actions-metrics.ts reads it) of the
 *   whole tree, and per subagent.
 *
 * The model is a fake with a fixed latency (no network); the parent has no budget. Needs a dev
 * server with `--metrics-port`. Alone: `npm run bench -- --only=subagents`.
 */
import { ScriptedModel, text, toolUse, type ScriptedFunction } from '../src/models/scripted';
import { DEFAULT_NAMESPACE, WORKFLOW_TYPE, type AgentRunInput, type ModelRequest } from '../src/shared';
import { temporal } from '@temporalio/proto';
import { TASK_TOOL_NAME, subagentReportSignal } from '../src/shared/subagents';
import { createAgentWorker } from '../src/worker';
import { countActions, totalOf, type ActionCounts } from './actions-metrics';
import { settle, uniqueName, type BenchContext } from './context';
import { OUTPUT_TOOL, createBenchRegistry } from './scenario';
import { ms, table } from './stats';

export interface SubagentRow {
  subagents: number;
  /** Model calls each subagent makes (one `emit_output` call per call but the last). */
  childCalls: number;
  wallMs: number;
  parentHistoryBytes: number;
  parentHistoryEvents: number;
  /**
   * The parent's events other than workflow tasks, and their bytes: what its subagents add as such.
   * (How many workflow tasks the parent takes depends on how the children's ends batch in time.)
   */
  parentOtherEvents: number;
  parentOtherBytes: number;
  /** `durableAgent.subagentReport` signals the parent received. */
  reports: number;
  /** Billable actions of the whole tree (parent and subagents). */
  actions: number;
  actionTypes: ActionCounts;
}

export interface SubagentFigure {
  latencyMs: number;
  rows: SubagentRow[];
  /** Parallel speed-up: wall time of 10 over wall time of 1 (1.0 = perfectly parallel). */
  tenOverOne: number;
  /** Per subagent, by the subagent's model calls: what it adds to its parent's history. */
  perSubagent: {
    childCalls: number;
    historyBytes: number;
    historyEvents: number;
    otherEvents: number;
    otherBytes: number;
    actions: number;
  }[];
}

const LATENCY_MS = 1000;
const PARENT_PROMPT = 'bench: start the subagents';
/** A run that has not ended by then is terminated and the figure fails (it never hangs the bench). */
const RUN_TIMEOUT_MS = 120_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The parent asks for `count` task calls, then answers; every other request is a subagent's: each of
 * its first `childCalls - 1` calls asks for one `emit_output`, its last answers.
 */
function benchModel(count: number, childCalls: number): ScriptedModel {
  const step: ScriptedFunction = async (request: ModelRequest) => {
    const first = request.messages[0];
    const isParent = first?.role === 'user' && first.content === PARENT_PROMPT;
    const last = request.messages[request.messages.length - 1];
    const hasResults = Array.isArray(last?.content) && last.content.some((b) => b.type === 'tool_result');
    if (!isParent) {
      await sleep(LATENCY_MS);
      const callsSoFar = request.messages.filter((m) => m.role === 'assistant').length;
      if (callsSoFar + 1 < childCalls) return toolUse([{ name: OUTPUT_TOOL, input: { bytes: 16 } }]);
      return text('subagent done');
    }
    if (hasResults) return text('all subagents done');
    return toolUse(
      Array.from({ length: count }, (_, i) => ({
        name: TASK_TOOL_NAME,
        input: { prompt: `subagent ${i + 1}: answer at once`, description: `part ${i + 1}` },
      })),
    );
  };
  // One step per model call: the parent's two and each subagent's.
  return new ScriptedModel(Array.from({ length: count * childCalls + 2 }, () => step));
}

async function measureOne(ctx: BenchContext, metricsUrl: string, count: number, childCalls: number) {
  const model = benchModel(count, childCalls);
  const taskQueue = uniqueName('subagents');
  const worker = await createAgentWorker({
    connection: ctx.connection,
    namespace: DEFAULT_NAMESPACE,
    taskQueue,
    workflowBundlePath: ctx.bundlePath,
    deps: { models: () => model, tools: createBenchRegistry(), defaultWorkspace: ctx.workspace },
  });
  // No tool list: parent and subagents have the worker's tools (the bench's registry), `task` by the depth limit.
  const input: AgentRunInput = {
    prompt: PARENT_PROMPT,
    model: 'scripted-bench',
    maxIterations: childCalls + 2,
    maxSubagentDepth: 1,
  };
  const workflowId = uniqueName(`subagents-${count}x${childCalls}`);
  return worker.runUntil(async (): Promise<SubagentRow> => {
    const { value, actions } = await countActions(metricsUrl, async () => {
      const started = performance.now();
      const handle = await ctx.client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId, args: [input] });
      const settled = await settle(handle, RUN_TIMEOUT_MS);
      const wallMs = performance.now() - started;
      if (!settled.ok) throw new Error(`subagents: the ${count}-subagent run did not complete: ${settled.error}`);
      return { handle, wallMs, exitReason: (settled.result as { exitReason: string }).exitReason };
    });
    if (value.exitReason !== 'completed') throw new Error(`the ${count}-subagent run ended ${value.exitReason}`);
    // Without the workflow side's task tool the calls fail as unknown tools and no child starts: no figure.
    const last = `${workflowId}.task-${count}`;
    await ctx.client.workflow
      .getHandle(last)
      .describe()
      .catch(() => {
        throw new Error(`no subagent run ${last}: this build's workflow does not start subagents`);
      });
    const info = (await value.handle.describe()).raw.workflowExecutionInfo;
    const events = (await value.handle.fetchHistory()).events ?? [];
    const workflowTask = (e: (typeof events)[number]) =>
      !!(
        e.workflowTaskScheduledEventAttributes ||
        e.workflowTaskStartedEventAttributes ||
        e.workflowTaskCompletedEventAttributes ||
        e.workflowTaskFailedEventAttributes ||
        e.workflowTaskTimedOutEventAttributes
      );
    const other = events.filter((e) => !workflowTask(e));
    return {
      subagents: count,
      childCalls,
      wallMs: value.wallMs,
      parentHistoryBytes: Number(info?.historySizeBytes ?? 0),
      parentHistoryEvents: Number(info?.historyLength ?? 0),
      parentOtherEvents: other.length,
      parentOtherBytes: other.reduce(
        (sum, e) => sum + temporal.api.history.v1.HistoryEvent.encode(e).finish().length,
        0,
      ),
      reports: events.filter(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === subagentReportSignal.name,
      ).length,
      actions: totalOf(actions),
      actionTypes: actions,
    };
  });
}

export async function measureSubagents(ctx: BenchContext, metricsUrl: string): Promise<SubagentFigure> {
  // A first run warms the worker's bundle load and the server's caches; not counted.
  ctx.log('subagents: warm-up run');
  await measureOne(ctx, metricsUrl, 1, 1);
  const rows: SubagentRow[] = [];
  for (const childCalls of [1, 10]) {
    for (const count of [1, 10]) {
      ctx.log(`subagents: ${count} subagent(s) of ${childCalls} model call(s)`);
      rows.push(await measureOne(ctx, metricsUrl, count, childCalls));
    }
  }
  const row = (count: number, childCalls: number) =>
    rows.find((r) => r.subagents === count && r.childCalls === childCalls)!;
  return {
    latencyMs: LATENCY_MS,
    rows,
    tenOverOne: row(10, 1).wallMs / row(1, 1).wallMs,
    perSubagent: [1, 10].map((childCalls) => {
      const [one, ten] = [row(1, childCalls), row(10, childCalls)];
      return {
        childCalls,
        historyBytes: Math.round((ten.parentHistoryBytes - one.parentHistoryBytes) / 9),
        historyEvents: (ten.parentHistoryEvents - one.parentHistoryEvents) / 9,
        otherEvents: (ten.parentOtherEvents - one.parentOtherEvents) / 9,
        otherBytes: Math.round((ten.parentOtherBytes - one.parentOtherBytes) / 9),
        actions: (ten.actions - one.actions) / 9,
      };
    }),
  };
}

export function formatSubagentFigure(figure: SubagentFigure): string[] {
  return [
    `Subagents (each model call ${figure.latencyMs} ms; parent: one turn of task calls, then its answer; no budget)`,
    table([
      [
        'subagents',
        'calls each',
        'wall time',
        "parent's history",
        'of it not workflow tasks',
        'reports',
        'actions (tree)',
      ],
      ...figure.rows.map((r) => [
        String(r.subagents),
        String(r.childCalls),
        ms(r.wallMs, 0),
        `${r.parentHistoryBytes} B / ${r.parentHistoryEvents} events`,
        `${r.parentOtherBytes} B / ${r.parentOtherEvents} events`,
        String(r.reports),
        String(r.actions),
      ]),
    ]),
    `10 in parallel take ${figure.tenOverOne.toFixed(2)}× the time of 1`,
    ...figure.perSubagent.map(
      (p) =>
        `a subagent of ${p.childCalls} model call(s) adds ${p.historyBytes} B / ${p.historyEvents.toFixed(1)} events to ` +
        `its parent's history (not counting workflow tasks: ${p.otherBytes} B / ${p.otherEvents.toFixed(1)} events); ` +
        `${p.actions} billable actions in all`,
    ),
  ];
}
