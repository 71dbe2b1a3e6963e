import { benchAllocatorEnv } from './worker-child';
import { formatSandboxFigure, type SandboxFigure } from './sandbox-figure';
import { formatSearchFigure, type SearchFigure } from './search-figure';
import type { HistoryRow } from './history-figure';
import type { OverheadFigure } from './overhead-figure';
import type { ReplayRow } from './replay-figure';
import { mib, ms, table } from './stats';
import { cpuRatios, type ThroughputFigure } from './throughput-figure';

export interface BenchMeta {
  date: string;
  commit: string;
  node: string;
  machine: string;
  server: string;
  command: string;
  loadAverageAtStart: number;
  loadAverageAtEnd?: number;
  totalSeconds?: number;
}

export interface BenchResults {
  meta: BenchMeta;
  history?: HistoryRow[];
  /** Figure 2 on each server it ran on. */
  overhead?: Array<OverheadFigure & { server: string }>;
  throughput?: ThroughputFigure;
  replay?: ReplayRow[];
  /** Issue 11: ms per bash call with and without the sandbox. */
  sandbox?: SandboxFigure;
  /** Issue 11: the RE2 grep/glob engine on a 100 MiB tree next to the JavaScript one it replaced. */
  search?: SearchFigure;
}

const TARGET_BYTES_AT_200 = 3 * 1000 * 1000;

/** The figures as plain text tables, in the order of issue 4. */
export function formatReport(results: BenchResults): string {
  const { meta } = results;
  const out: string[] = [
    `durable-agent benchmarks · ${meta.date} · commit ${meta.commit}`,
    `${meta.machine} · node ${meta.node} · ${meta.server}`,
    `load average ${meta.loadAverageAtStart} at start, ${meta.loadAverageAtEnd ?? '?'} at end ` +
      '(timings are only comparable within one run; other work on the machine slows every variant)',
    `reproduce: ${meta.command}`,
  ];
  if (results.history) out.push('', ...historySection(results.history));
  for (const [i, figure] of (results.overhead ?? []).entries()) out.push('', ...overheadSection(figure, i));
  if (results.throughput) out.push('', ...throughputSection(results.throughput));
  if (results.replay) out.push('', ...replaySection(results.replay));
  if (results.sandbox) out.push('', ...formatSandboxFigure(results.sandbox));
  if (results.search) out.push('', formatSearchFigure(results.search));
  return out.join('\n');
}

function historySection(rows: HistoryRow[]): string[] {
  const sorted = [...rows].sort(
    (a, b) => a.outputBytes - b.outputBytes || a.iterations - b.iterations || a.subject.localeCompare(b.subject),
  );
  const lines = [
    '1. Event history after N iterations (model call + one tool call each, then the closing summary call)',
    table([
      ['subject', 'iterations', 'tool output', 'events', 'history', 'runs', 'largest run', 'done', 'wall s', 'outcome'],
      ...sorted.map((r) => [
        r.subject,
        String(r.iterations),
        `${r.outputBytes / 1024} KiB`,
        String(r.size.totalEvents),
        mib(r.size.totalBytes),
        String(r.size.runs.length),
        mib(r.size.largestRunBytes),
        String(r.size.toolCallsCompleted),
        (r.wallMs / 1000).toFixed(1),
        r.size.outcome,
      ]),
    ]),
    '   history = sum over the run chain (continue-as-new followed); done = tool calls completed.',
  ];
  for (const r of sorted) {
    const marks = [
      r.size.continueAsNewSuggestedAt !== undefined
        ? `continue-as-new suggested after ${r.size.continueAsNewSuggestedAt}`
        : '',
      r.size.warnThresholdAt !== undefined ? `10 MiB warning after ${r.size.warnThresholdAt}` : '',
      r.ok ? '' : `stopped after ${r.size.toolCallsCompleted}: ${r.size.outcome}`,
    ].filter(Boolean);
    if (marks.length) lines.push(`   ${r.subject} ${r.iterations} × ${r.outputBytes / 1024} KiB: ${marks.join('; ')}`);
  }
  const ours200 = sorted.find((r) => r.subject === 'ours' && r.iterations === 200 && r.outputBytes === 8 * 1024);
  if (ours200) {
    const pass = ours200.ok && ours200.size.totalBytes <= TARGET_BYTES_AT_200;
    lines.push(
      `   target ours ≤ 3 MB at 200 iterations: ${pass ? 'met' : 'NOT met'} ` +
        `(${(ours200.size.totalBytes / 1e6).toFixed(2)} MB)`,
    );
  }
  return lines;
}

function overheadSection(figure: OverheadFigure & { server: string }, index: number): string[] {
  const lines = [
    `2${'abcdefgh'[index] ?? ''}. Orchestration overhead per iteration (zero model latency, ${figure.outputBytes} B tool ` +
      `output; ${figure.runs} runs × ${figure.iterationsPerRun} iterations per variant, after a warm-up run)`,
    `   server: ${figure.server}`,
    table([
      ['variant', 'median ms', 'p95 ms', 'mean ms', 'n', 'activity dispatch ms', 'workflow task dispatch ms'],
      ...figure.rows.map((r) => [
        r.label,
        ms(r.perIteration.median),
        ms(r.perIteration.p95),
        ms(r.perIteration.mean),
        String(r.perIteration.n),
        r.medianScheduleToStartMs !== undefined ? ms(r.medianScheduleToStartMs, 1) : '-',
        r.medianWorkflowTaskScheduleToStartMs !== undefined ? ms(r.medianWorkflowTaskScheduleToStartMs, 1) : '-',
      ]),
    ]),
    '   dispatch: median scheduled→started time in the history of one run (server clock); an activity at ~0 was ' +
      'dispatched eagerly.',
  ];
  if (figure.bestPlainLoop) lines.push(`   best plain activity-per-step loop: ${figure.bestPlainLoop}`);
  for (const { label, ratio } of figure.oursOverBestPlain) {
    lines.push(
      `   ${label} / best plain loop = ${ratio.toFixed(2)}× (target ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'NOT met'})`,
    );
  }
  if (figure.oursOverNaiveSameCalls !== undefined) {
    lines.push(
      `   ours / naive making the same calls (both eager on) = ${figure.oursOverNaiveSameCalls.toFixed(2)}×: ` +
        'the cost of what ours does besides the calls',
    );
  }
  return lines;
}

function throughputSection(figure: ThroughputFigure): string[] {
  return [
    `3. Throughput: ${figure.runs} concurrent runs × ${figure.iterations} iterations, ${figure.modelLatencyMs} ms ` +
      `model latency, ${figure.outputBytes / 1024} KiB tool output, one worker (own process, default options, ${allocatorNote()})` +
      (figure.sideBySide
        ? '; the variants of each round side by side, each with its own worker (server CPU not split)'
        : '') +
      (figure.warmupRuns
        ? `; CPU measured after ${figure.warmupRuns} warm-up runs on each worker (BENCH_THROUGHPUT_WARMUP=0: from a cold start), ` +
          'peak RSS over both'
        : '; CPU measured from a cold start (no warm-up runs)'),
    table([
      [
        'variant',
        'completed',
        'wall s',
        'iterations/s',
        'run p50 s',
        'run p95 s',
        'worker RSS start',
        'peak',
        'worker CPU ms/it',
        'of it main thread',
        'server CPU ms/it',
        'dispatch ms (act / wft)',
      ],
      ...figure.rows.map((r) => [
        rowLabel(figure, r),
        `${r.completed}/${r.runs}`,
        (r.wallMs / 1000).toFixed(2),
        r.iterationsPerSecond.toFixed(0),
        (r.runDurationMs.median / 1000).toFixed(2),
        (r.runDurationMs.p95 / 1000).toFixed(2),
        mib(r.workerRssAtStartBytes),
        mib(r.workerPeakRssBytes),
        r.completed > 0 ? ms(r.workerCpuMs / (r.completed * figure.iterations), 1) : 'n/a',
        r.workerMainThreadCpuMs !== undefined && r.completed > 0
          ? ms(r.workerMainThreadCpuMs / (r.completed * figure.iterations), 1)
          : 'n/a',
        r.serverCpuMs !== undefined && r.completed > 0
          ? ms(r.serverCpuMs / (r.completed * figure.iterations), 1)
          : 'n/a',
        `${ms(r.sampleRun?.medianScheduleToStartMs ?? NaN, 0)} / ${ms(r.sampleRun?.medianWorkflowTaskScheduleToStartMs ?? NaN, 0)}`,
      ]),
    ]),
    "   CPU ms/it: CPU time of the worker process (and of its main thread: activities and the SDK's main-side " +
      "work; the rest is the workflow threads, V8's GC and compiler threads and the SDK's Rust core) / of the " +
      'Temporal server per iteration; dispatch: median ' +
      'scheduled→started of activities / workflow tasks in the first run started.',
    ...threadLines(figure),
    ...warmupLines(figure),
    ...ratioLines(figure),
  ];
}

/** Each row's warm-up: its CPU per iteration from the worker's start, JIT compilation included. */
function warmupLines(figure: ThroughputFigure): string[] {
  const parts = figure.rows.flatMap((r) =>
    r.warmupRuns && r.warmupCpuMs !== undefined
      ? [`${rowLabel(figure, r)} ${(r.warmupCpuMs / (r.warmupRuns * figure.iterations)).toFixed(2)}`]
      : [],
  );
  return parts.length ? [`   warm-up worker CPU, ms/it (cold start, JIT included): ${parts.join(', ')}`] : [];
}

/** A row's variant, with its round when the figure ran more than one. */
function rowLabel(figure: ThroughputFigure, r: ThroughputFigure['rows'][number]): string {
  return figure.rows.some((other) => other.round > 1) ? `${r.label} (round ${r.round})` : r.label;
}

/**
 * Each row's worker CPU per iteration by thread (Linux), the biggest first. Read when the worker is
 * asked to stop, before its shutdown: the table's totals, read after it, are a little higher.
 */
function threadLines(figure: ThroughputFigure): string[] {
  return figure.rows.flatMap((r) => {
    if (!r.workerThreadCpuMs || r.completed === 0) return [];
    const perIteration = (cpuMs: number) => cpuMs / (r.completed * figure.iterations);
    const parts = Object.entries(r.workerThreadCpuMs)
      .sort((a, b) => b[1] - a[1])
      .map(([name, cpuMs]) => `${name} ${perIteration(cpuMs).toFixed(2)}`);
    return [`   by thread, ms/it (before shutdown): ${rowLabel(figure, r)}: ${parts.join(', ')}`];
  });
}

/** Each round's ours/naive worker CPU per iteration and their median, when both ran. */
function ratioLines(figure: ThroughputFigure): string[] {
  const { perRound, median } = cpuRatios(figure);
  if (median === undefined) return [];
  return [
    `   ours / naive worker CPU per iteration: ${perRound.map((r) => `${r.toFixed(2)}×`).join(', ')}` +
      (perRound.length > 1
        ? ` (median ${median.toFixed(2)}×; ${figure.sideBySide ? 'side by side in each round' : 'rounds alternate which runs first'})`
        : ''),
  ];
}

function replaySection(rows: ReplayRow[]): string[] {
  return [
    '4. Replay (Worker.runReplayHistories with the bench bundle, which holds the real agentWorkflow)',
    table([
      ['history', 'runs', 'events', 'size', 'replay ms', 'first (incl. worker start) ms', 'result'],
      ...rows.map((r) => [
        r.label,
        String(r.runs),
        String(r.events),
        mib(r.bytes),
        ms(r.replayMs, 0),
        ms(r.firstReplayMs, 0),
        r.error ?? 'ok',
      ]),
    ]),
  ];
}

/** How the bench's worker processes allocate memory (see `benchAllocatorEnv`). */
function allocatorNote(): string {
  const env = benchAllocatorEnv();
  const set = Object.entries(env).map(([key, value]) => `${key}=${value}`);
  return set.length ? `glibc malloc with ${set.join(' ')}` : "glibc malloc's defaults";
}
