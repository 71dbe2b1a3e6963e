import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { deployDir } from '../scripts/cluster/cluster';
import type { WorkerProcessConfig, WorkerProcessMessage } from './worker-process';

/**
 * The memory allocator settings of the bench's worker processes: glibc's defaults, or with
 * `BENCH_MALLOC=trim` the `MALLOC_*` lines of deploy/worker.env (commented out there: they trade
 * worker CPU for memory; docs/benchmarks.md, "Worker cost"). Ours and the naive loop get the same; a
 * `MALLOC_*` variable already in the bench's environment wins.
 */
function benchWorkerEnv(): NodeJS.ProcessEnv {
  const documented =
    process.env.BENCH_MALLOC === 'trim'
      ? readFileSync(path.join(deployDir(), 'worker.env'), 'utf8').matchAll(/^#?\s*(MALLOC_\w+)=(\S+)$/gm)
      : [];
  return { ...Object.fromEntries([...documented].map((m) => [m[1]!, m[2]!])), ...process.env };
}

/** The `MALLOC_*` settings the bench's worker processes run with (none: glibc's defaults). */
export function benchAllocatorEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(benchWorkerEnv()).filter((e): e is [string, string] => e[0].startsWith('MALLOC_') && !!e[1]),
  );
}

/**
 * Forks a bench worker process (`worker-process.ts`). `BENCH_CPU_PROF=<dir>` writes CPU profiles of
 * its threads (the workflow thread included) to `<dir>/<label>`; `exposeGc` lets it collect garbage
 * before it measures its memory.
 */
export function forkBenchWorker(
  config: WorkerProcessConfig,
  options: { label: string; exposeGc?: boolean },
): ChildProcess {
  const profDir = process.env.BENCH_CPU_PROF;
  const execArgv = [
    ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}/${options.label}`] : []),
    ...(options.exposeGc ? ['--expose-gc'] : []),
    // Node and V8 flags for the worker alone, to see where its CPU goes (e.g. `--single-threaded-gc`).
    ...(process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
  ];
  const child = fork(require.resolve('./worker-process'), [JSON.stringify(config)], {
    stdio: 'inherit',
    execArgv,
    env: benchWorkerEnv(),
  });
  child.on('exit', (code, signal) => {
    if (code !== 0)
      process.stderr.write(`[bench] worker process ${child.pid} exited (code ${code}, signal ${signal})\n`);
  });
  return child;
}

/** The child's next message of `type`; rejects if the child exits first. */
export function nextMessage<K extends WorkerProcessMessage['type']>(
  child: ChildProcess,
  type: K,
): Promise<Extract<WorkerProcessMessage, { type: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: WorkerProcessMessage) => {
      if (message.type !== type) return;
      cleanup();
      resolve(message as Extract<WorkerProcessMessage, { type: K }>);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`the bench worker process exited (code ${code}) before '${type}'`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** Asks the child for its memory now. */
export async function measureChild(child: ChildProcess): Promise<Extract<WorkerProcessMessage, { type: 'memory' }>> {
  const reply = nextMessage(child, 'memory');
  child.send({ type: 'measure' });
  return reply;
}

/** Tells the child to measure CPU from now on; returns the CPU it spent before (its warm-up). */
export async function markChild(child: ChildProcess): Promise<Extract<WorkerProcessMessage, { type: 'marked' }>> {
  if (!child.connected) throw new Error(`the bench worker process exited (code ${child.exitCode}) before 'marked'`);
  const reply = nextMessage(child, 'marked');
  child.send({ type: 'mark' }, (err) => {
    if (err) child.kill('SIGTERM');
  });
  return reply;
}

/**
 * Tells the child to stop and returns its final figures once it has exited (a profile written by
 * `--cpu-prof` needs the process to exit on its own), or after 15 s, killing it then.
 */
export async function stopChild(child: ChildProcess): Promise<Extract<WorkerProcessMessage, { type: 'stopped' }>> {
  if (!child.connected)
    throw new Error(`the bench worker process exited (code ${child.exitCode}) before it was stopped`);
  const stopped = nextMessage(child, 'stopped');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send({ type: 'stop' });
  const figures = await stopped;
  const timer = setTimeout(() => child.kill('SIGTERM'), 15_000);
  await exited;
  clearTimeout(timer);
  return figures;
}
