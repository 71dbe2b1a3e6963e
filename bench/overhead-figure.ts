import { SUMMARY_INSTRUCTION, isToolUse, toolResultBlock, type Message } from '../src/shared';
import { settle, startRun, uniqueName, type BenchContext } from './context';
import { measureChain } from './history';
import type { CallPlacement } from './naive-workflow';
import {
  BENCH_MODEL,
  CallClock,
  benchPrompt,
  createBenchModel,
  createBenchRegistry,
  writeBenchDoc,
  type BenchTool,
} from './scenario';
import { distribution, type Distribution } from './stats';
import { createBenchWorker, withWorkers, type Subject } from './workers';

/** Small outputs: the figure is about orchestration, not payload size. */
const OUTPUT_BYTES = 256;

export interface OverheadVariant {
  key: string;
  label: string;
  subject: Subject | 'in-process';
  eager?: boolean;
  modelCalls?: CallPlacement;
  toolCalls?: CallPlacement;
  /** The tool called each iteration (default the custom `emit_output`, which ours runs as a regular activity). */
  tool?: BenchTool;
  /** Ours: held against the best plain loop (the target). */
  target?: boolean;
  /** A plain loop with a regular activity per model call: what ours is held against (the target). */
  plainLoop?: boolean;
}

export const OVERHEAD_VARIANTS: OverheadVariant[] = [
  { key: 'floor', label: 'in-process loop, no Temporal (floor)', subject: 'in-process' },
  {
    key: 'ours-read-file',
    label: 'ours · read_file (built-in, local activity) · eager on',
    subject: 'ours',
    eager: true,
    tool: 'read_file',
    target: true,
  },
  {
    key: 'ours-custom-local',
    label: 'ours · custom tool with runsLocally · eager on',
    subject: 'ours',
    eager: true,
    tool: 'emit_output_local',
    target: true,
  },
  { key: 'ours-eager', label: 'ours · custom tool (activity) · eager on', subject: 'ours', eager: true, target: true },
  { key: 'ours-no-eager', label: 'ours · custom tool (activity) · eager off', subject: 'ours', eager: false },
  { key: 'naive-eager', label: 'naive · activities · eager on', subject: 'naive', eager: true, plainLoop: true },
  { key: 'naive-no-eager', label: 'naive · activities · eager off', subject: 'naive', eager: false, plainLoop: true },
  {
    key: 'naive-local-tool',
    label: 'naive · tool as local activity · eager on',
    subject: 'naive',
    eager: true,
    toolCalls: 'local',
    plainLoop: true,
  },
  {
    key: 'naive-read-file-local',
    label: 'naive · read_file as local activity · eager on',
    subject: 'naive',
    eager: true,
    tool: 'read_file',
    toolCalls: 'local',
    plainLoop: true,
  },
  {
    key: 'naive-all-local',
    label: 'naive · model + tool as local activities',
    subject: 'naive',
    eager: true,
    modelCalls: 'local',
    toolCalls: 'local',
  },
];

export interface OverheadRow {
  key: string;
  label: string;
  /** Milliseconds per iteration (model call to next model call). */
  perIteration: Distribution;
  /** Median scheduled→started time of the activities of one run (≈0 when dispatched eagerly). */
  medianScheduleToStartMs?: number;
  /** The same for its workflow tasks. */
  medianWorkflowTaskScheduleToStartMs?: number;
}

export interface OverheadFigure {
  iterationsPerRun: number;
  runs: number;
  outputBytes: number;
  rows: OverheadRow[];
  bestPlainLoop?: string;
  /** Median of each of ours' target variants over the best plain loop: the issue's target is ≤ 1.5. */
  oursOverBestPlain: Array<{ label: string; ratio: number }>;
  /** Median of ours over the naive loop making the same calls (both eager on): what ours' own work costs. */
  oursOverNaiveSameCalls?: number;
}

/**
 * Figure 2: time per iteration (one model call, one tool call, zero model latency), timed on the
 * worker from one model call to the next. Runs go one at a time, the variants interleaved round by
 * round, after one warm-up run each.
 */
export async function measureOverhead(ctx: BenchContext): Promise<OverheadFigure> {
  const iterations = ctx.quick ? 20 : 30;
  const rounds = ctx.quick ? 2 : 3;
  const clock = new CallClock();
  const calls = (rounds + 1) * (iterations + 1) * OVERHEAD_VARIANTS.length + 16;
  const pools = ['ours-eager', 'ours-no-eager', 'naive-eager', 'naive-no-eager'] as const;
  const queue = Object.fromEntries(pools.map((p) => [p, uniqueName(`overhead-${p}`)])) as Record<
    (typeof pools)[number],
    string
  >;
  const workers = [];
  for (const pool of pools) {
    workers.push(
      await createBenchWorker({
        connection: ctx.connection,
        taskQueue: queue[pool],
        bundlePath: ctx.bundlePath,
        subject: pool.startsWith('ours') ? 'ours' : 'naive',
        model: createBenchModel({ calls, clock }),
        workspace: ctx.workspace,
        eager: !pool.endsWith('no-eager'),
      }),
    );
  }

  const samples = new Map<string, number[]>(OVERHEAD_VARIANTS.map((v) => [v.key, []]));
  const dispatch = new Map<
    string,
    Pick<OverheadRow, 'medianScheduleToStartMs' | 'medianWorkflowTaskScheduleToStartMs'>
  >();
  const runOnce = async (variant: OverheadVariant, round: number): Promise<void> => {
    if (variant.subject === 'in-process') {
      const key = `in-process-${round}`;
      await inProcessRun(
        ctx.workspace,
        iterations,
        createBenchModel({ calls: iterations + 1, clock, fallbackKey: key }),
      );
      if (round > 0) samples.get(variant.key)?.push(...clock.intervals(key));
      return;
    }
    const pool = `${variant.subject}-${variant.eager ? 'eager' : 'no-eager'}` as (typeof pools)[number];
    const handle = await startRun(ctx.client, {
      subject: variant.subject,
      taskQueue: queue[pool],
      iterations,
      outputBytes: OUTPUT_BYTES,
      ...(variant.tool ? { tool: variant.tool } : {}),
      naive: {
        ...(variant.modelCalls ? { modelCalls: variant.modelCalls } : {}),
        ...(variant.toolCalls ? { toolCalls: variant.toolCalls } : {}),
      },
    });
    const settled = await settle(handle, 120_000);
    if (!settled.ok) throw new Error(`overhead run ${variant.key} did not complete: ${settled.error}`);
    if (round === 0) return;
    samples.get(variant.key)?.push(...clock.intervals(handle.workflowId));
    if (round === rounds) {
      const { size } = await measureChain(ctx.client, handle.workflowId, handle.firstExecutionRunId);
      dispatch.set(variant.key, {
        ...(size.medianScheduleToStartMs !== undefined
          ? { medianScheduleToStartMs: size.medianScheduleToStartMs }
          : {}),
        ...(size.medianWorkflowTaskScheduleToStartMs !== undefined
          ? { medianWorkflowTaskScheduleToStartMs: size.medianWorkflowTaskScheduleToStartMs }
          : {}),
      });
    }
  };

  await writeBenchDoc(ctx.workspace, OUTPUT_BYTES);
  await withWorkers(workers, async () => {
    // Round 0 warms each variant up (JIT, sticky caches, server paths) and is not counted.
    for (let round = 0; round <= rounds; round++) {
      for (const variant of OVERHEAD_VARIANTS) await runOnce(variant, round);
      ctx.log(`overhead: round ${round}/${rounds} done`);
    }
  });

  const rows: OverheadRow[] = OVERHEAD_VARIANTS.map((v) => ({
    key: v.key,
    label: v.label,
    perIteration: distribution(samples.get(v.key) ?? []),
    ...dispatch.get(v.key),
  }));
  const plain = rows.filter((r) => OVERHEAD_VARIANTS.find((v) => v.key === r.key)?.plainLoop);
  const best = plain.reduce<OverheadRow | undefined>(
    (a, b) => (!a || b.perIteration.median < a.perIteration.median ? b : a),
    undefined,
  );
  const ours = rows.find((r) => r.key === 'ours-eager');
  const targets = rows.filter((r) => OVERHEAD_VARIANTS.find((v) => v.key === r.key)?.target);
  const naive = rows.find((r) => r.key === 'naive-eager');
  return {
    iterationsPerRun: iterations,
    runs: rounds,
    outputBytes: OUTPUT_BYTES,
    rows,
    ...(best ? { bestPlainLoop: best.label } : {}),
    oursOverBestPlain: best
      ? targets.map((r) => ({ label: r.label, ratio: r.perIteration.median / best.perIteration.median }))
      : [],
    ...(naive && ours ? { oursOverNaiveSameCalls: ours.perIteration.median / naive.perIteration.median } : {}),
  };
}

/** The floor: the same scripted model and tool registry called directly in a loop, no Temporal. */
async function inProcessRun(
  workspace: string,
  iterations: number,
  model: ReturnType<typeof createBenchModel>,
): Promise<void> {
  const tools = createBenchRegistry();
  const signal = new AbortController().signal;
  const heartbeat = () => {};
  const messages: Message[] = [{ role: 'user', content: benchPrompt(OUTPUT_BYTES) }];
  for (let i = 0; i < iterations; i++) {
    const response = await model.call(
      { model: BENCH_MODEL, messages, tools: tools.specs(), maxTokens: 8192 },
      { signal, heartbeat },
    );
    messages.push({ role: 'assistant', content: response.content });
    const results = await Promise.all(
      response.content.filter(isToolUse).map(async (t) => {
        const r = await tools.run(t.name, t.input, { workspace, signal, heartbeat, toolUseId: t.id });
        return toolResultBlock(t.id, r.content, r.isError);
      }),
    );
    messages.push({ role: 'user', content: results });
  }
  await model.call(
    {
      model: BENCH_MODEL,
      messages: [...messages, { role: 'user', content: SUMMARY_INSTRUCTION }],
      tools: tools.specs(),
      toolChoice: { type: 'none' },
      maxTokens: 8192,
    },
    { signal, heartbeat },
  );
}
