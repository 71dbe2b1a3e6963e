import { Worker } from '@temporalio/worker';
import type { BenchContext } from './context';
import type { History } from './history';
import type { HistoryRow } from './history-figure';
import { naiveBundleOf } from './server';
import { median } from './stats';

const REPETITIONS = 5;

export interface ReplayTarget {
  label: string;
  row: HistoryRow;
  histories: History[];
}

export interface ReplayRow {
  label: string;
  iterations: number;
  runs: number;
  events: number;
  bytes: number;
  /** Median over repetitions of replaying the whole chain, on a warm replay worker. */
  replayMs: number;
  /** The first replay, which includes creating the replay worker. */
  firstReplayMs: number;
  /** A replay error (non-determinism) — there should be none. */
  error?: string;
}

/**
 * Figure 4: how long a worker takes to rebuild a run from its history (after a crash, an eviction
 * from the sticky cache, or on another worker), with the bundle the runs ran on.
 */
export async function measureReplay(ctx: BenchContext, targets: ReplayTarget[]): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  for (const target of targets) {
    const { row, histories } = target;
    const items = Array.from({ length: REPETITIONS + 1 }, () =>
      histories.map((history, i) => ({ workflowId: `${row.size.workflowId}#${i}`, history })),
    ).flat();
    const durations: number[] = [];
    let error: string | undefined;
    let last = performance.now();
    let chainMs = 0;
    let done = 0;
    // Each loop on its own bundle, as it ran (bench/server.ts, `bundleBenchWorkflows`).
    const codePath = row.subject === 'naive' ? naiveBundleOf(ctx.bundlePath) : ctx.bundlePath;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath } }, items)) {
      const now = performance.now();
      chainMs += now - last;
      last = now;
      if (result.error) error ??= `${result.error.name}: ${result.error.message}`;
      if (++done % histories.length === 0) {
        durations.push(chainMs);
        chainMs = 0;
      }
    }
    const [first = NaN, ...warm] = durations;
    rows.push({
      label: target.label,
      iterations: row.iterations,
      runs: histories.length,
      events: row.size.totalEvents,
      bytes: row.size.totalBytes,
      replayMs: median(warm),
      firstReplayMs: first,
      ...(error ? { error } : {}),
    });
    ctx.log(`replay: ${target.label}: ${median(warm).toFixed(0)} ms`);
  }
  return rows;
}
