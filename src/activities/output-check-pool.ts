import { Worker } from 'node:worker_threads';
import type { CheckOutputInput, CheckOutputOutput } from '../shared/output-schema';
import { threadEntry, type ThreadEntry } from '../tools/search/thread-entry';
import type { OutputCheckRequest, OutputCheckResponse } from './output-check-thread';

/**
 * Typed answers are checked off the worker's main thread, in a thread with its own small heap and a
 * deadline. Run input bounds the schema's size, nesting and `$ref` expansion before a run starts
 * (src/shared/output-schema-bounds.ts), but a recursive schema's cost also grows with the answer's
 * depth: a check that would exhaust memory or run long ends only its thread, and the check answers
 * as an answer that does not match (or, at run start, a schema that is refused). The worker process,
 * and the other runs on it, never notice; a run that asks again costs one more bounded thread.
 *
 * The threads are shared fairly between runs (keyed by workflow id): a run has at most one check on
 * a thread, and a free thread goes to the waiting run that has used the least validator time, so a
 * run whose checks hit the deadline over and over cannot keep another run's cheap check waiting for
 * more than one deadline. A check that cannot get a thread within OUTPUT_CHECK_QUEUE_MS rejects with
 * {@link ValidatorBusyError} (the activity answers a retryable failure, retried with backoff) instead
 * of running into the local activity's timeout. A run whose checks used OUTPUT_CHECK_RUN_BUDGET_MS of
 * validator time on this worker gets its next answers refused unchecked.
 */

/** Heap of a validator thread. The checks the run-input bounds let through need a few MB. */
export const OUTPUT_CHECK_HEAP_MB = 96;
/**
 * A check is stopped (its thread terminated) after this long on its thread. Below the `checkOutput`
 * local activity's 30-second start-to-close timeout, so it ends as a verdict, not a timed-out attempt
 * that Temporal would retry with the same schema and answer.
 */
export const OUTPUT_CHECK_DEADLINE_MS = 10_000;
/** Checks running at once per worker process; more wait for a free thread. */
export const OUTPUT_CHECK_MAX_THREADS = 2;
/**
 * How long a check may wait for a thread. With the deadline, below the local activity's 30 seconds:
 * a check that cannot start in time is "busy" (retried with backoff), never a timed-out attempt.
 */
export const OUTPUT_CHECK_QUEUE_MS = 15_000;
/** Once an answer failed, the second pass that names every violation gets this long (within the deadline). */
export const OUTPUT_CHECK_DETAIL_MS = 2_000;
/** Validator time a run's checks may use on one worker; after it, its answers are invalid unchecked. */
export const OUTPUT_CHECK_RUN_BUDGET_MS = 60_000;
/** Runs whose validator time is remembered; the least recently seen idle ones are forgotten first. */
const MAX_RUNS_KEPT = 10_000;

/** A check that could not get a validator thread in time: other runs' checks hold them. */
export class ValidatorBusyError extends Error {
  constructor(waitedMs: number) {
    super(
      `the output validator is busy with other runs' checks: no thread was free within ${waitedMs / 1000} seconds; try again later`,
    );
    this.name = 'ValidatorBusyError';
  }
}

export interface OutputCheckPoolOptions {
  heapMb?: number;
  deadlineMs?: number;
  maxThreads?: number;
  queueMs?: number;
  detailMs?: number;
  runBudgetMs?: number;
}

/** A run's share of the validator threads. */
interface RunUse {
  usedMs: number;
  inFlight: boolean;
  waiting: number;
}

interface Waiter {
  run: RunUse;
  seq: number;
  grant: () => void;
}

const LIMITS = `${OUTPUT_CHECK_HEAP_MB} MB of memory and ${OUTPUT_CHECK_DEADLINE_MS / 1000} seconds`;

/** The verdict for a check that could not finish: `why` says what stopped it. */
function stoppedVerdict(input: CheckOutputInput, why: string): CheckOutputOutput {
  return input.text === undefined
    ? { kind: 'bad_schema', message: `checking the schema ${why}` }
    : { kind: 'invalid', violations: [`the answer could not be checked against outputSchema: the check ${why}`] };
}

function overBudgetVerdict(input: CheckOutputInput, budgetMs: number): CheckOutputOutput {
  const why = `could not be checked within the run's budget (its checks used ${budgetMs / 1000} seconds of validator time)`;
  return input.text === undefined
    ? { kind: 'bad_schema', message: `the schema ${why}` }
    : { kind: 'invalid', violations: [`the answer ${why}`] };
}

export class OutputCheckPool {
  private idle: Worker | undefined;
  private running = 0;
  private nextId = 1;
  private nextSeq = 0;
  private entry: ThreadEntry | undefined;
  private readonly waiters: Waiter[] = [];
  private readonly runs = new Map<string, RunUse>();
  /** Checks answered "busy" so far (tests, diagnostics). */
  busyCount = 0;

  constructor(private readonly options: OutputCheckPoolOptions = {}) {}

  /**
   * Check a schema (and an answer) in a thread, for the run `run` (a workflow id; none: a run of its
   * own). Rejects only with {@link ValidatorBusyError}; `signal` drops a check nobody waits for.
   */
  async check(input: CheckOutputInput, signal?: AbortSignal, run?: string): Promise<CheckOutputOutput> {
    const use = this.useOf(run);
    const budgetMs = this.options.runBudgetMs ?? OUTPUT_CHECK_RUN_BUDGET_MS;
    if (use.usedMs >= budgetMs) return overBudgetVerdict(input, budgetMs);
    use.waiting++;
    try {
      await this.slot(use, signal);
    } catch (error) {
      if (error instanceof ValidatorBusyError) throw error;
      return stoppedVerdict(input, 'was cancelled');
    } finally {
      use.waiting--;
    }
    const started = performance.now();
    try {
      return await this.runOnThread(input, signal);
    } finally {
      use.usedMs += performance.now() - started;
      use.inFlight = false;
      this.running--;
      this.dispatch();
    }
  }

  /** Validator time the run's checks used on this pool (tests). */
  usedMs(run: string): number {
    return this.runs.get(run)?.usedMs ?? 0;
  }

  /** Terminate the idle thread (tests; a worker's exit ends it anyway: it is unref'd). */
  async close(): Promise<void> {
    const idle = this.idle;
    this.idle = undefined;
    await idle?.terminate();
  }

  private useOf(run: string | undefined): RunUse {
    const fresh: RunUse = { usedMs: 0, inFlight: false, waiting: 0 };
    if (run === undefined) return fresh;
    const use = this.runs.get(run) ?? fresh;
    // Most recently seen last: the idle runs seen least recently are forgotten first.
    this.runs.delete(run);
    this.runs.set(run, use);
    if (this.runs.size > MAX_RUNS_KEPT) {
      for (const [key, old] of this.runs) {
        if (this.runs.size <= MAX_RUNS_KEPT) break;
        if (!old.inFlight && old.waiting === 0) this.runs.delete(key);
      }
    }
    return use;
  }

  /** Waits for a thread, fairly; rejects with ValidatorBusyError after the queue budget, or on abort. */
  private slot(run: RunUse, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const queueMs = this.options.queueMs ?? OUTPUT_CHECK_QUEUE_MS;
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
      };
      const onAbort = () => {
        leave();
        reject(new Error('cancelled'));
      };
      const waiter: Waiter = {
        run,
        seq: this.nextSeq++,
        grant: () => {
          leave();
          resolve();
        },
      };
      const timer = setTimeout(() => {
        leave();
        this.busyCount++;
        reject(new ValidatorBusyError(queueMs));
      }, queueMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.dispatch();
    });
  }

  /** Hands free threads to the waiting runs with nothing on a thread, least validator time used first. */
  private dispatch(): void {
    const max = this.options.maxThreads ?? OUTPUT_CHECK_MAX_THREADS;
    while (this.running < max) {
      let next: Waiter | undefined;
      for (const waiter of this.waiters) {
        if (waiter.run.inFlight) continue;
        if (
          next === undefined ||
          waiter.run.usedMs < next.run.usedMs ||
          (waiter.run.usedMs === next.run.usedMs && waiter.seq < next.seq)
        ) {
          next = waiter;
        }
      }
      if (next === undefined) return;
      this.running++;
      next.run.inFlight = true;
      next.grant();
    }
  }

  private runOnThread(input: CheckOutputInput, signal?: AbortSignal): Promise<CheckOutputOutput> {
    const deadlineMs = this.options.deadlineMs ?? OUTPUT_CHECK_DEADLINE_MS;
    const detailMs = this.options.detailMs ?? OUTPUT_CHECK_DETAIL_MS;
    const deadlineAt = performance.now() + deadlineMs;
    return new Promise((resolve) => {
      let worker: Worker;
      try {
        worker = this.idle ?? this.spawn();
      } catch (error) {
        return resolve(stoppedVerdict(input, `could not start a validator thread (${String(error)})`));
      }
      this.idle = undefined;
      const id = this.nextId++;
      let settled = false;
      // The first pass's verdict on an answer that fails; it stands if the second pass is stopped.
      let provisional: CheckOutputOutput | undefined;
      const finish = (output: CheckOutputOutput, reuse: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (reuse && this.idle === undefined) {
          worker.unref();
          this.idle = worker;
        } else {
          worker.terminate().catch(() => undefined);
        }
        resolve(output);
      };
      const onMessage = (response: OutputCheckResponse) => {
        if (response.id !== id) return;
        if (response.final) return finish(response.output, true);
        provisional = response.output;
        clearTimeout(timer);
        const left = Math.max(0, Math.min(detailMs, deadlineAt - performance.now()));
        timer = setTimeout(() => finish(response.output, false), left);
      };
      const onError = (error: Error) => {
        const oom = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        finish(
          provisional ??
            stoppedVerdict(input, oom ? `ran out of memory (limits: ${LIMITS})` : `failed (${error.message})`),
          false,
        );
      };
      const onExit = (code: number) =>
        finish(provisional ?? stoppedVerdict(input, `stopped (its thread exited, code ${code})`), false);
      const onAbort = () => finish(stoppedVerdict(input, 'was cancelled'), false);
      let timer = setTimeout(
        () => finish(stoppedVerdict(input, `took longer than its time limit (limits: ${LIMITS})`), false),
        deadlineMs,
      );
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.ref();
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ id, input } satisfies OutputCheckRequest);
    });
  }

  private spawn(): Worker {
    this.entry ??= threadEntry(__dirname, 'output-check-thread');
    const worker = new Worker(this.entry.filename, {
      eval: this.entry.eval,
      ...(this.entry.workerData ? { workerData: this.entry.workerData } : {}),
      resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb ?? OUTPUT_CHECK_HEAP_MB },
      stdout: false,
      stderr: false,
    });
    // A thread being terminated (its check stopped) may still run out of memory before it ends: that
    // error, with the check's own listener gone, must not become the worker's uncaught exception.
    worker.on('error', () => undefined);
    // An idle thread that dies (it should not) is forgotten rather than handed the next check.
    worker.once('exit', () => {
      if (this.idle === worker) this.idle = undefined;
    });
    return worker;
  }
}

let shared: OutputCheckPool | undefined;

/** The pool every `checkOutput` call of this process uses. */
export function outputCheckPool(): OutputCheckPool {
  shared ??= new OutputCheckPool();
  return shared;
}

/** Replaces the process's pool (tests: a lower deadline); undefined: a default one on next use. */
export function useOutputCheckPool(pool: OutputCheckPool | undefined): void {
  shared = pool;
}
