import type { WorkflowHandle } from '@temporalio/client';
import { WORKFLOW_TYPE, stateQuery, type AgentRunInput } from '../src/shared';
import { uniqueName, type BenchContext } from './context';
import { BENCH_MODEL } from './scenario';
import { forkBenchWorker, measureChild, nextMessage, stopChild } from './worker-child';
import type { WorkerMemory, WorkerProcessConfig } from './worker-process';

/** Sessions started (and ended) this many at a time. */
const START_CONCURRENCY = 50;
/** Waiting sessions whose `state` is checked after the memory is measured. */
const CHECKED = 20;
const SETTLE_TIMEOUT_MS = 600_000;

export interface IdleRow {
  label: string;
  /** `maxCachedWorkflows` the worker ran with (the production default when not overridden). */
  cacheBound: number | 'default';
  sessions: number;
  /** Sessions that answered (model calls the worker served). */
  answered: number;
  /** Of `checked` sessions queried afterwards, how many said `awaiting_input`. */
  waitingChecked: number;
  checked: number;
  secondsToIdle: number;
  atStart: WorkerMemory;
  /** After every session answered and waits, after a full GC. */
  idle: WorkerMemory;
  peakRssBytes: number;
}

export interface IdleFigure {
  sessions: number;
  rows: IdleRow[];
}

/**
 * Idle sessions: `sessions` runs with `session: true` on one worker process; each answers its
 * prompt once (scripted model, no tool calls) and then waits for input. Measures the worker's RSS,
 * heap and workflow cache once all of them wait, with the production cache bound and with a small
 * explicit one, so what a waiting session costs is compared with what the cache bound allows.
 */
export async function measureIdle(ctx: BenchContext): Promise<IdleFigure> {
  const sessions = ctx.quick ? 200 : 1000;
  const variants: Array<{ label: string; cacheBound: number | 'default' }> = [
    { label: 'production worker options', cacheBound: 'default' },
    { label: 'maxCachedWorkflows 100', cacheBound: 100 },
  ];
  const rows: IdleRow[] = [];
  for (const variant of variants) rows.push(await measureVariant(ctx, sessions, variant));
  return { sessions, rows };
}

async function measureVariant(
  ctx: BenchContext,
  sessions: number,
  variant: { label: string; cacheBound: number | 'default' },
): Promise<IdleRow> {
  const taskQueue = uniqueName('idle');
  const config: WorkerProcessConfig = {
    address: ctx.address,
    taskQueue,
    bundlePath: ctx.bundlePath,
    subject: 'ours',
    eager: true,
    latencyMs: 0,
    calls: sessions * 2 + 16,
    workspace: ctx.workspace,
    answerOnly: true,
    ...(variant.cacheBound !== 'default' ? { workerOptions: { maxCachedWorkflows: variant.cacheBound } } : {}),
  };
  const child = forkBenchWorker(config, { label: `idle-${variant.cacheBound}`, exposeGc: true });
  const handles: WorkflowHandle[] = [];
  try {
    await nextMessage(child, 'ready');
    const atStart = await measureChild(child);
    const started = performance.now();
    await inBatches(sessions, async () => {
      const input: AgentRunInput = { prompt: 'Say hello, then wait.', model: BENCH_MODEL, session: true };
      handles.push(
        await ctx.client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId: uniqueName('idle'), args: [input] }),
      );
    });
    const idle = await untilIdle(child, sessions);
    const secondsToIdle = (performance.now() - started) / 1000;
    // After the memory is measured: a query of a run the cache evicted replays it.
    const sample = handles.filter((_, i) => i % Math.max(1, Math.floor(sessions / CHECKED)) === 0).slice(0, CHECKED);
    const states = await Promise.all(sample.map((h) => h.query(stateQuery).catch(() => undefined)));
    const waitingChecked = states.filter((s) => s?.status === 'awaiting_input').length;
    ctx.log(
      `idle: ${variant.label}: ${idle.modelCalls}/${sessions} answered, ${idle.cachedWorkflows} cached, ` +
        `RSS ${(idle.rssBytes / 2 ** 20).toFixed(0)} MiB`,
    );
    await inBatches(handles.length, (i) => handles[i]!.terminate('idle bench done').catch(() => undefined));
    const stopped = await stopChild(child);
    return {
      label: variant.label,
      cacheBound: variant.cacheBound,
      sessions,
      answered: idle.modelCalls,
      waitingChecked,
      checked: sample.length,
      secondsToIdle,
      atStart,
      idle,
      peakRssBytes: stopped.maxRssBytes,
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
}

/** Polls the worker until every session answered and no activation has run for 2 s; then its memory. */
async function untilIdle(child: Parameters<typeof measureChild>[0], sessions: number): Promise<WorkerMemory> {
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  let quietSince: number | undefined;
  let last: WorkerMemory | undefined;
  for (;;) {
    const now = await measureChild(child);
    const quiet = now.modelCalls >= sessions && now.activationsInFlight === 0 && now.modelCalls === last?.modelCalls;
    quietSince = quiet ? (quietSince ?? performance.now()) : undefined;
    if (quietSince !== undefined && performance.now() - quietSince >= 2000) return now;
    if (performance.now() > deadline) {
      throw new Error(
        `idle bench: ${now.modelCalls}/${sessions} sessions answered after ${SETTLE_TIMEOUT_MS / 1000} s`,
      );
    }
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function inBatches(count: number, fn: (index: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += START_CONCURRENCY) {
    await Promise.all(Array.from({ length: Math.min(START_CONCURRENCY, count - i) }, (_, j) => fn(i + j)));
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

export function formatIdleFigure(f: IdleFigure): string[] {
  const lines = [
    `Idle sessions: ${f.sessions} runs with session: true on one worker (own process), each answered once and waits`,
  ];
  for (const r of f.rows) {
    const perSession = (r.idle.rssBytes - r.atStart.rssBytes) / r.sessions / 1024;
    lines.push(
      `  ${r.label}: ${r.answered}/${r.sessions} answered in ${r.secondsToIdle.toFixed(1)} s; ` +
        `${r.waitingChecked}/${r.checked} checked wait for input; ${r.idle.cachedWorkflows} runs cached; ` +
        `RSS ${mib(r.atStart.rssBytes)} → ${mib(r.idle.rssBytes)} idle (${perSession.toFixed(0)} KiB a session), ` +
        `peak ${mib(r.peakRssBytes)}; heap ${mib(r.atStart.heapUsedBytes)} → ${mib(r.idle.heapUsedBytes)}`,
    );
  }
  lines.push(
    '  RSS/heap of the whole worker process after a full GC of its main thread (the workflow thread collects on its own).',
  );
  return lines;
}
