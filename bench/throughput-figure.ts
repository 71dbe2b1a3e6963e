import { settle, startRun, uniqueName, type BenchContext } from './context';
import { measureChain, type ChainSize } from './history';
import { distribution, median, type Distribution } from './stats';
import { forkBenchWorker, markChild, nextMessage, stopChild } from './worker-child';
import type { WorkerProcessConfig } from './worker-process';
import type { Subject } from './workers';

const MODEL_LATENCY_MS = 100;

/**
 * The naive loop records the whole conversation with every model call, about iterations² / 2 × the
 * tool output in all; the server terminates a run at 50 MiB of history (at iteration 110 with 8 KiB
 * outputs, docs/benchmarks.md "Event history"). Shapes are kept well below that.
 */
const MAX_NAIVE_HISTORY_BYTES = 40 * 1024 * 1024;

/**
 * The runs' shape: 10 iterations with 1 KiB of tool output by default, or
 * `BENCH_THROUGHPUT_SHAPE=<iterations>x<bytes>` (1-100 iterations, 1-65536 bytes, and a naive run's
 * history under 40 MiB) to see how the loops compare as runs grow (the naive loop re-sends the whole
 * conversation every call).
 */
export function throughputShape(value = process.env.BENCH_THROUGHPUT_SHAPE): {
  iterations: number;
  outputBytes: number;
} {
  if (value === undefined || value === '') return { iterations: 10, outputBytes: 1024 };
  const m = /^(\d+)x(\d+)$/.exec(value.trim());
  const iterations = Number(m?.[1]);
  const outputBytes = Number(m?.[2]);
  if (!m || iterations < 1 || iterations > 100 || outputBytes < 1 || outputBytes > 65536) {
    throw new Error(
      `BENCH_THROUGHPUT_SHAPE='${value}': expected <iterations>x<bytes>, 1-100 iterations and 1-65536 bytes (e.g. 30x8192)`,
    );
  }
  if ((iterations * iterations * outputBytes) / 2 > MAX_NAIVE_HISTORY_BYTES) {
    throw new Error(
      `BENCH_THROUGHPUT_SHAPE='${value}': the naive loop's history would be about ` +
        `${Math.round((iterations * iterations * outputBytes) / 2 / 1024 / 1024)} MiB, past what the server lets a run ` +
        'record; keep iterations² × bytes / 2 under 40 MiB (e.g. 30x8192, 100x4096)',
    );
  }
  return { iterations, outputBytes };
}

/**
 * How many times the variants run, `BENCH_THROUGHPUT_ROUNDS` (1-10, default 1). A change worth a few
 * percent is smaller than the spread between runs on a shared machine (docs/benchmarks.md): rounds
 * alternate the variants' order (ours first, then naive first, …) and the report gives each round's
 * ours/naive ratio and their median, measured under the same conditions.
 */
export function throughputRounds(value = process.env.BENCH_THROUGHPUT_ROUNDS): number {
  if (value === undefined || value.trim() === '') return 1;
  const rounds = Number(value.trim());
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10) {
    throw new Error(`BENCH_THROUGHPUT_ROUNDS='${value}': expected a whole number of rounds from 1 to 10`);
  }
  return rounds;
}

/**
 * `BENCH_THROUGHPUT_SIDE_BY_SIDE=1`: each round runs the selected variants at the same time, each on
 * its own worker process and task queue, instead of one after the other. On a shared machine the
 * speed of the CPU changes by tens of percent from one minute to the next (the server's CPU for the
 * same work varied 2× within one bench run: docs/benchmarks.md), so variants run one after the
 * other compare different machines; side by side they share whatever the machine is doing. They
 * also share its two cores, so the figures are not those of a worker alone.
 */
export function throughputSideBySide(value = process.env.BENCH_THROUGHPUT_SIDE_BY_SIDE): boolean {
  const v = value?.trim() ?? '';
  if (v === '' || v === '0') return false;
  if (v === '1') return true;
  throw new Error(`BENCH_THROUGHPUT_SIDE_BY_SIDE='${value}': expected 1 (side by side) or 0 (one after the other)`);
}

/**
 * `BENCH_THROUGHPUT_WARMUP`: runs each worker completes before the measured ones (0-1000; default
 * 100, 20 with `--quick`), of the same shape and as many at once. The CPU figures count from the end
 * of the warm-up: V8 compiles the hot code of both loops in their first seconds (2.7-3.0 s of
 * compiler threads in a cold 200-run round, a tenth of the worker's CPU), a cost a long-lived worker
 * pays once. The warm-up's own CPU is kept in the row (`warmupCpuMs`); 0 measures from a cold start.
 */
export function throughputWarmup(quick: boolean, value = process.env.BENCH_THROUGHPUT_WARMUP): number {
  if (value === undefined || value.trim() === '') return quick ? 20 : 100;
  const runs = Number(value.trim());
  if (!Number.isInteger(runs) || runs < 0 || runs > 1000) {
    throw new Error(`BENCH_THROUGHPUT_WARMUP='${value}': expected a whole number of warm-up runs from 0 to 1000`);
  }
  return runs;
}

export interface ThroughputRow {
  label: string;
  /** Which round of `BENCH_THROUGHPUT_ROUNDS` (from 1). */
  round: number;
  subject: Subject;
  eager: boolean;
  runs: number;
  completed: number;
  wallMs: number;
  iterationsPerSecond: number;
  /** Start to result of each run. */
  runDurationMs: Distribution;
  /** The worker process's RSS when ready, and its high-water mark (kernel ru_maxrss). */
  workerRssAtStartBytes: number;
  workerPeakRssBytes: number;
  /** The worker's CPU over the measured runs (after the warm-up). */
  workerCpuMs: number;
  /**
   * Runs completed before the measured ones, and the CPU the worker took from `ready` until the
   * measured runs started (JIT warm-up included; the worker's creation and bundle load are not).
   */
  warmupRuns?: number;
  warmupCpuMs?: number;
  /** The worker's main thread's share of `workerCpuMs` (Linux only). */
  workerMainThreadCpuMs?: number;
  /** The worker's CPU by thread name (Linux only): where the rest of `workerCpuMs` went. */
  workerThreadCpuMs?: Record<string, number>;
  /** CPU the Temporal server spent meanwhile (when the bench runs the server). */
  serverCpuMs?: number;
  /** Dispatch latencies in the history of the first run started: where the time went under load. */
  sampleRun?: Pick<ChainSize, 'medianScheduleToStartMs' | 'medianWorkflowTaskScheduleToStartMs'>;
}

export interface ThroughputFigure {
  runs: number;
  iterations: number;
  modelLatencyMs: number;
  outputBytes: number;
  /** The variants of each round ran at the same time (`BENCH_THROUGHPUT_SIDE_BY_SIDE=1`). */
  sideBySide?: boolean;
  /** Runs each worker completed before the measured `runs` (`BENCH_THROUGHPUT_WARMUP`). */
  warmupRuns?: number;
  rows: ThroughputRow[];
}

interface Variant {
  label: string;
  subject: Subject;
  eager: boolean;
}

const VARIANTS: Variant[] = [
  { label: 'ours · eager dispatch on', subject: 'ours', eager: true },
  { label: 'ours · eager dispatch off', subject: 'ours', eager: false },
  { label: 'naive · eager dispatch on', subject: 'naive', eager: true },
  { label: 'naive · eager dispatch off', subject: 'naive', eager: false },
];

/**
 * Figure 3: many concurrent runs with a slow model on one worker (its own process, default worker
 * options). Wall time from the first start to the last result.
 */
export async function measureThroughput(ctx: BenchContext): Promise<ThroughputFigure> {
  const runs = ctx.quick ? 50 : 200;
  const { iterations: ITERATIONS, outputBytes: OUTPUT_BYTES } = throughputShape();
  const rows: ThroughputRow[] = [];
  // BENCH_THROUGHPUT=ours,naive (labels' first words, or `eager`/`no-eager`): only those variants, to profile.
  const only = process.env.BENCH_THROUGHPUT?.split(',');
  const selected = VARIANTS.filter((v) => !only || only.includes(variantKey(v)));
  const rounds = throughputRounds();
  const sideBySide = throughputSideBySide();
  const warmup = throughputWarmup(ctx.quick);
  const shape = { runs, warmup, iterations: ITERATIONS, outputBytes: OUTPUT_BYTES, rounds, sideBySide };
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? selected : [...selected].reverse();
    if (sideBySide) rows.push(...(await sideBySideRound(ctx, order, i + 1, shape)));
    else for (const variant of order) rows.push(await runVariant(ctx, variant, i + 1, shape));
  }
  return {
    runs,
    iterations: ITERATIONS,
    modelLatencyMs: MODEL_LATENCY_MS,
    outputBytes: OUTPUT_BYTES,
    ...(sideBySide ? { sideBySide } : {}),
    ...(warmup ? { warmupRuns: warmup } : {}),
    rows,
  };
}

interface RoundShape {
  runs: number;
  warmup: number;
  iterations: number;
  outputBytes: number;
  rounds: number;
  sideBySide: boolean;
}

/**
 * The variants of one round at the same time. Each starts its warm-up once every worker is ready (or
 * failed to start), and its measured runs once every warm-up is over (or failed), so no variant has
 * the machine to itself; every variant's worker is stopped before a failure is reported.
 */
async function sideBySideRound(
  ctx: BenchContext,
  variants: Variant[],
  round: number,
  shape: RoundShape,
): Promise<ThroughputRow[]> {
  const phases: Phases = { ready: barrier(variants.length), warm: barrier(variants.length) };
  const settled = await Promise.allSettled(variants.map((variant) => runVariant(ctx, variant, round, shape, phases)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<ThroughputRow>).value);
}

/** Where the variants of a side-by-side round wait for each other: each calls `arrive` once. */
interface Phases {
  /** Every worker is ready (or failed to start): the warm-ups start. */
  ready: () => Promise<void>;
  /** Every warm-up is over (or failed): the measured runs start. */
  warm: () => Promise<void>;
}

/** A barrier for `parties`: each call counts one arrival; all of them resolve once the last arrives. */
function barrier(parties: number): () => Promise<void> {
  let waiting = parties;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return () => {
    if (--waiting <= 0) release();
    return all;
  };
}

/**
 * One variant's runs on a worker of its own: `warmup` runs, then the `runs` it measures, as many at
 * once; the row it measured. `phases` (side by side) hold each phase until every variant reached it.
 */
async function runVariant(
  ctx: BenchContext,
  variant: Variant,
  round: number,
  shape: RoundShape,
  phases?: Phases,
): Promise<ThroughputRow> {
  const { runs, warmup, iterations, outputBytes } = shape;
  const taskQueue = uniqueName(`throughput-${variant.subject}`);
  const config: WorkerProcessConfig = {
    address: ctx.address,
    taskQueue,
    bundlePath: ctx.bundlePath,
    subject: variant.subject,
    eager: variant.eager,
    latencyMs: MODEL_LATENCY_MS,
    calls: (warmup + runs) * (iterations + 1) + 16,
    workspace: ctx.workspace,
  };
  // Side by side, this variant arrives at each barrier exactly once, failing or not, so the other
  // variant is never held waiting for it (and its worker is stopped by its own `finally`).
  let allReady: Promise<void> | undefined;
  let allWarm: Promise<void> | undefined;
  const arriveReady = () => void (allReady ??= phases?.ready() ?? Promise.resolve());
  const arriveWarm = () => void (allWarm ??= phases?.warm() ?? Promise.resolve());
  let child: ReturnType<typeof forkBenchWorker> | undefined;
  try {
    child = forkBenchWorker(config, { label: variantKey(variant) });
    const ready = await nextMessage(child, 'ready').finally(arriveReady);
    await allReady;
    await warmUp(ctx, taskQueue, variant, shape).finally(arriveWarm);
    await allWarm;
    // CPU counts from here: the warm-up, and any wait for the other variant, stay out of the figures.
    const warmupCpuMs = (await markChild(child)).cpuMs;
    // Side by side, the server serves both variants at once: its CPU is not one variant's.
    const serverCpuBefore = shape.sideBySide ? undefined : await ctx.serverCpuMs();
    const started = performance.now();
    const durations: number[] = [];
    let sample: { workflowId: string; runId: string } | undefined;
    const outcomes = await Promise.all(
      Array.from({ length: runs }, async () => {
        const t0 = performance.now();
        const handle = await startRun(ctx.client, { subject: variant.subject, taskQueue, iterations, outputBytes });
        sample ??= { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
        const settled = await settle(handle, 300_000);
        durations.push(performance.now() - t0);
        return settled.ok;
      }),
    );
    const wallMs = performance.now() - started;
    const serverCpuAfter = shape.sideBySide ? undefined : await ctx.serverCpuMs();
    const stopped = await stopChild(child);
    const completed = outcomes.filter(Boolean).length;
    const sampled = sample ? (await measureChain(ctx.client, sample.workflowId, sample.runId)).size : undefined;
    const of = shape.rounds > 1 ? ` (round ${round}/${shape.rounds})` : '';
    ctx.log(`throughput: ${variant.label}${of}: ${completed}/${runs} runs in ${(wallMs / 1000).toFixed(1)} s`);
    return {
      ...variant,
      round,
      runs,
      completed,
      wallMs,
      iterationsPerSecond: (completed * iterations) / (wallMs / 1000),
      runDurationMs: distribution(durations),
      workerRssAtStartBytes: ready.rssBytes,
      workerPeakRssBytes: stopped.maxRssBytes,
      workerCpuMs: stopped.cpuMs,
      ...(warmup > 0 ? { warmupRuns: warmup, warmupCpuMs } : {}),
      ...(stopped.mainThreadCpuMs !== undefined ? { workerMainThreadCpuMs: stopped.mainThreadCpuMs } : {}),
      ...(stopped.threadCpuMs ? { workerThreadCpuMs: stopped.threadCpuMs } : {}),
      ...(serverCpuBefore !== undefined && serverCpuAfter !== undefined
        ? { serverCpuMs: serverCpuAfter - serverCpuBefore }
        : {}),
      ...(sampled
        ? {
            sampleRun: {
              medianScheduleToStartMs: sampled.medianScheduleToStartMs,
              medianWorkflowTaskScheduleToStartMs: sampled.medianWorkflowTaskScheduleToStartMs,
            },
          }
        : {}),
    };
  } finally {
    arriveReady();
    arriveWarm();
    if (child && child.exitCode === null) child.kill('SIGTERM');
  }
}

/** The warm-up: `shape.warmup` runs at once (none when 0), each of which must complete. */
async function warmUp(ctx: BenchContext, taskQueue: string, variant: Variant, shape: RoundShape): Promise<void> {
  if (shape.warmup === 0) return;
  const { iterations, outputBytes } = shape;
  const outcomes = await Promise.all(
    Array.from({ length: shape.warmup }, async () => {
      const handle = await startRun(ctx.client, { subject: variant.subject, taskQueue, iterations, outputBytes });
      return (await settle(handle, 300_000)).ok;
    }),
  );
  const failed = outcomes.filter((ok) => !ok).length;
  if (failed) throw new Error(`throughput: ${failed} of ${shape.warmup} warm-up runs of ${variant.label} failed`);
}

/**
 * Ours' worker CPU per iteration over the naive loop's, for each round that ran both with the same
 * dispatch (eager on first), and their median: what the issue's goal is measured by.
 */
export function cpuRatios(figure: Pick<ThroughputFigure, 'rows'>): { perRound: number[]; median?: number } {
  const perIteration = (r: ThroughputRow) => (r.completed > 0 ? r.workerCpuMs / r.completed : NaN);
  const perRound: number[] = [];
  const roundsRun = [...new Set(figure.rows.map((r) => r.round))].sort((a, b) => a - b);
  for (const round of roundsRun) {
    for (const eager of [true, false]) {
      const ours = figure.rows.find((r) => r.round === round && r.subject === 'ours' && r.eager === eager);
      const naive = figure.rows.find((r) => r.round === round && r.subject === 'naive' && r.eager === eager);
      if (!ours || !naive) continue;
      const ratio = perIteration(ours) / perIteration(naive);
      if (Number.isFinite(ratio)) perRound.push(ratio);
      break;
    }
  }
  return { perRound, ...(perRound.length ? { median: median(perRound) } : {}) };
}

function variantKey(variant: { subject: Subject; eager: boolean }): string {
  return `${variant.subject}-${variant.eager ? 'eager' : 'no-eager'}`;
}
