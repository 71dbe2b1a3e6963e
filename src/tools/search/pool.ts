import { Worker } from 'node:worker_threads';
import { SEARCH_IDLE_THREADS, SEARCH_MAX_THREADS, SEARCH_THREAD_HEAP_MB } from './limits';
import { threadEntry, type ThreadEntry } from './thread-entry';
import type { GlobResult, GrepResult, SearchJob, SearchReply, ThreadRequest, ThreadResponse } from './protocol';

/**
 * A small pool of worker threads that run glob and grep. The thread that runs workflow tasks and
 * activities only posts a job and waits, so a search, however heavy, never stalls other runs,
 * queries or heartbeats. A job that outlives its deadline, or whose call is cancelled, has its
 * thread terminated (`Worker.terminate()` stops JavaScript at once; RE2 returns to JavaScript after
 * each block, which is bounded), and the caller gets an answer at once instead of waiting for it.
 */

/** How a job ended. */
export type SearchOutcome<R> =
  | { kind: 'done'; reply: SearchReply<R> }
  | { kind: 'stopped'; why: 'deadline' | 'cancelled' }
  | { kind: 'failed'; message: string };

interface Waiter {
  start: () => void;
}

export class SearchPool {
  private readonly idle: Worker[] = [];
  private readonly waiting: Waiter[] = [];
  private running = 0;
  private nextId = 1;
  private entry: ThreadEntry | undefined;
  private readonly forgetters = new WeakMap<Worker, () => void>();

  constructor(
    private readonly maxThreads = SEARCH_MAX_THREADS,
    private readonly maxIdle = SEARCH_IDLE_THREADS,
  ) {}

  /**
   * Run `job` in a thread. Never rejects: the outcome says whether it finished, was stopped (its
   * deadline passed, counted from this call, or `signal` fired) or its thread failed.
   */
  run<R extends GrepResult | GlobResult>(
    job: SearchJob,
    options: { deadlineMs: number; signal: AbortSignal },
  ): Promise<SearchOutcome<R>> {
    return new Promise<SearchOutcome<R>>((resolve) => {
      let settled = false;
      let worker: Worker | undefined;
      let waiter: Waiter | undefined;
      /** `thread`: keep it for the next job, terminate it, or it has exited already. */
      const finish = (outcome: SearchOutcome<R>, thread: 'reuse' | 'terminate' | 'exited') => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        if (waiter) removeFrom(this.waiting, waiter);
        if (worker) {
          worker.off('message', onMessage).off('error', onError).off('exit', onExit);
          if (thread === 'reuse') this.release(worker);
          else if (thread === 'terminate') this.discard(worker);
          else this.freeSlot();
        }
        resolve(outcome);
      };
      const id = this.nextId++;
      const onMessage = (response: ThreadResponse) => {
        if (response.id === id) finish({ kind: 'done', reply: response.reply as SearchReply<R> }, 'reuse');
      };
      const onError = (error: Error) => finish({ kind: 'failed', message: describeThreadError(error) }, 'terminate');
      const onExit = (code: number) =>
        finish({ kind: 'failed', message: `the search thread exited unexpectedly (code ${code})` }, 'exited');
      const onAbort = () => finish({ kind: 'stopped', why: 'cancelled' }, 'terminate');
      const timer = setTimeout(() => finish({ kind: 'stopped', why: 'deadline' }, 'terminate'), options.deadlineMs);
      if (options.signal.aborted) return onAbort();
      options.signal.addEventListener('abort', onAbort, { once: true });

      const start = () => {
        waiter = undefined;
        if (settled) return;
        this.running++;
        try {
          worker = this.takeIdle() ?? this.spawn();
        } catch (error) {
          this.freeSlot();
          return finish({ kind: 'failed', message: `could not start a search thread: ${String(error)}` }, 'exited');
        }
        worker.ref();
        worker.on('message', onMessage).on('error', onError).on('exit', onExit);
        worker.postMessage({ id, job } satisfies ThreadRequest);
      };
      if (this.running < this.maxThreads) start();
      else {
        waiter = { start };
        this.waiting.push(waiter);
      }
    });
  }

  /** Threads running a job or still stopping after one (tests check that a stopped job's thread exits). */
  get busy(): number {
    return this.running;
  }

  /** Terminate every idle thread (running ones end with their jobs). */
  async close(): Promise<void> {
    await Promise.all(this.idle.splice(0).map((w) => w.terminate()));
  }

  private spawn(): Worker {
    this.entry ??= threadEntry();
    return new Worker(this.entry.filename, {
      eval: this.entry.eval,
      ...(this.entry.workerData ? { workerData: this.entry.workerData } : {}),
      resourceLimits: { maxOldGenerationSizeMb: SEARCH_THREAD_HEAP_MB },
      stdout: false,
      stderr: false,
    });
  }

  private release(worker: Worker): void {
    this.running--;
    if (this.idle.length < this.maxIdle) {
      // An idle thread must not keep the process alive.
      worker.unref();
      // A thread that dies while idle (it should not) leaves the pool instead of swallowing a job.
      const forget = () => removeFrom(this.idle, worker);
      this.forgetters.set(worker, forget);
      worker.once('exit', forget);
      this.idle.push(worker);
    } else {
      void worker.terminate();
    }
    this.startNext();
  }

  private takeIdle(): Worker | undefined {
    const worker = this.idle.pop();
    const forget = worker && this.forgetters.get(worker);
    if (worker && forget) worker.off('exit', forget);
    return worker;
  }

  /**
   * Terminate a thread whose answer is no longer wanted. The caller has its answer already; the
   * slot stays taken until the thread has really exited (it finishes the RE2 call it is in, at most
   * one block or one line), so stopped searches cannot pile up beyond the pool's size.
   */
  private discard(worker: Worker): void {
    worker.once('exit', () => this.freeSlot());
    worker.terminate().catch(() => undefined);
  }

  private freeSlot(): void {
    this.running--;
    this.startNext();
  }

  private startNext(): void {
    while (this.running < this.maxThreads && this.waiting.length > 0) this.waiting.shift()?.start();
  }
}

function removeFrom<T>(list: T[], item: T): void {
  const i = list.indexOf(item);
  if (i !== -1) list.splice(i, 1);
}

function describeThreadError(error: unknown): string {
  if (error instanceof Error && (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return `the search ran out of memory (its thread may use ${SEARCH_THREAD_HEAP_MB} MB) and was stopped`;
  }
  return `the search thread failed: ${error instanceof Error ? error.message : String(error)}`;
}

let shared: SearchPool | undefined;

/** The pool every glob and grep tool of this process uses. */
export function searchPool(): SearchPool {
  shared ??= new SearchPool();
  return shared;
}
