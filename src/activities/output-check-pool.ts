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

const LIMITS = `${OUTPUT_CHECK_HEAP_MB} MB of memory and ${OUTPUT_CHECK_DEADLINE_MS / 1000} seconds`;

/** The verdict for a check that could not finish: `why` says what stopped it. */
function stoppedVerdict(input: CheckOutputInput, why: string): CheckOutputOutput {
  return input.text === undefined
    ? { kind: 'bad_schema', message: `checking the schema ${why}` }
    : { kind: 'invalid', violations: [`the answer could not be checked against outputSchema: the check ${why}`] };
}

export class OutputCheckPool {
  private idle: Worker | undefined;
  private running = 0;
  private nextId = 1;
  private entry: ThreadEntry | undefined;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: { heapMb?: number; deadlineMs?: number; maxThreads?: number } = {}) {}

  /** Check a schema (and an answer) in a thread. Never rejects; `signal` drops a check nobody waits for. */
  async check(input: CheckOutputInput, signal?: AbortSignal): Promise<CheckOutputOutput> {
    try {
      await this.slot(signal);
    } catch {
      return stoppedVerdict(input, 'was cancelled');
    }
    try {
      return await this.runOnThread(input, signal);
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Terminate the idle thread (tests; a worker's exit ends it anyway: it is unref'd). */
  async close(): Promise<void> {
    const idle = this.idle;
    this.idle = undefined;
    await idle?.terminate();
  }

  private async slot(signal?: AbortSignal): Promise<void> {
    const max = this.options.maxThreads ?? OUTPUT_CHECK_MAX_THREADS;
    while (this.running >= max) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener('abort', wake);
          const i = this.waiting.indexOf(wake);
          if (i !== -1) this.waiting.splice(i, 1);
          resolve();
        };
        this.waiting.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
    signal?.throwIfAborted();
    this.running++;
  }

  private runOnThread(input: CheckOutputInput, signal?: AbortSignal): Promise<CheckOutputOutput> {
    const deadlineMs = this.options.deadlineMs ?? OUTPUT_CHECK_DEADLINE_MS;
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
        if (response.id === id) finish(response.output, true);
      };
      const onError = (error: Error) => {
        const oom = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        finish(
          stoppedVerdict(input, oom ? `ran out of memory (limits: ${LIMITS})` : `failed (${error.message})`),
          false,
        );
      };
      const onExit = (code: number) =>
        finish(stoppedVerdict(input, `stopped (its thread exited, code ${code})`), false);
      const onAbort = () => finish(stoppedVerdict(input, 'was cancelled'), false);
      const timer = setTimeout(
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
