import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { ScriptedModel, text, type ScriptStep, type ScriptedFunction } from '../src/models/scripted';
import { connectWorker } from '../src/worker';
import { createBenchModel } from './scenario';
import { benchConnectionFor } from './server';
import { createBenchWorker, installQuietRuntime, type BenchWorker, type Subject } from './workers';

/**
 * A bench worker in its own process, so its memory is measured alone (throughput, idle sessions,
 * query latency). Started by the bench with `fork`, configured by a JSON argument; it reports
 * `ready`, answers `measure` with its memory and cache, answers `mark` with the CPU it spent so far
 * and measures CPU from then on (a warm-up before it), runs until told to `stop`, then reports its
 * peak RSS and CPU time (since `ready`, or since the last `mark`) and exits.
 */
export interface WorkerProcessConfig {
  address: string;
  taskQueue: string;
  bundlePath: string;
  subject: Subject;
  eager: boolean;
  latencyMs: number;
  calls: number;
  workspace: string;
  /** The model answers every call with text (a session's answer) instead of the bench agent's tool call. */
  answerOnly?: boolean;
  /** Worker options on top of the production ones (JSON values only: cache size, slots). */
  workerOptions?: BenchWorkerTuning;
}

/** The worker options a bench may set on its worker process (JSON values only). */
export type BenchWorkerTuning = Pick<
  WorkerOptions,
  | 'maxCachedWorkflows'
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentWorkflowTaskPolls'
  | 'maxConcurrentActivityTaskExecutions'
  | 'tuner'
  | 'stickyQueueScheduleToStartTimeout'
  | 'nonStickyToStickyPollRatio'
  | 'workflowThreadPoolSize'
  | 'reuseV8Context'
>;

/** Memory of the worker process now (after a full GC when the process runs with --expose-gc). */
export interface WorkerMemory {
  rssBytes: number;
  heapUsedBytes: number;
  /** Runs the worker holds in its workflow cache. */
  cachedWorkflows: number;
  /** Workflow activations being processed now. */
  activationsInFlight: number;
  /** Model calls answered so far. */
  modelCalls: number;
}

export type WorkerProcessMessage =
  | { type: 'ready'; rssBytes: number }
  | ({ type: 'memory' } & WorkerMemory)
  /** The CPU spent from `ready` to the `mark` (a warm-up); `stopped` counts from the mark on. */
  | { type: 'marked'; cpuMs: number }
  | {
      type: 'stopped';
      maxRssBytes: number;
      sampledPeakRssBytes: number;
      cpuMs: number;
      /** CPU of the process's main thread alone (activities, the SDK's main-side work); Linux only. */
      mainThreadCpuMs?: number;
      /** CPU by thread name (main, workflow threads, V8 helpers, libuv pool, the Rust core); Linux only. */
      threadCpuMs?: Record<string, number>;
    };

let modelCalls = 0;
const answer: ScriptedFunction = () => {
  modelCalls += 1;
  return text('Done; ask me anything else.');
};

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;
  installQuietRuntime();
  let peak = process.memoryUsage.rss();
  // A fallback for ru_maxrss (the peak reported); sampling often would cost the CPU the figures measure.
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 250);
  // The bench server's connection (TLS, API key, namespace) when it is the configured external one.
  const conn = benchConnectionFor(config.address);
  const connection: NativeConnection = await connectWorker(conn);
  const worker = await createBenchWorker({
    connection,
    namespace: conn.namespace,
    taskQueue: config.taskQueue,
    bundlePath: config.bundlePath,
    subject: config.subject,
    model: config.answerOnly
      ? new ScriptedModel(new Array<ScriptStep>(config.calls).fill(answer))
      : createBenchModel({ calls: config.calls, latencyMs: config.latencyMs }),
    workspace: config.workspace,
    eager: config.eager,
    ...(config.workerOptions ? { workerOptions: config.workerOptions } : {}),
  });
  let cpuAtStart = process.cpuUsage();
  let mainAtStart = mainThreadCpuMs();
  let threadsAtStart = threadCpuMs();
  // Read when asked to stop: shutting down ends the workflow threads, and a thread's time goes with it.
  let threadsAtStop: ReturnType<typeof threadCpuMs>;
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') {
      threadsAtStop = threadCpuMs();
      worker.shutdown();
    }
    if (message.type === 'measure') send({ type: 'memory', ...measure(worker) });
    if (message.type === 'mark') {
      const spent = process.cpuUsage(cpuAtStart);
      cpuAtStart = process.cpuUsage();
      mainAtStart = mainThreadCpuMs();
      threadsAtStart = threadCpuMs();
      send({ type: 'marked', cpuMs: (spent.user + spent.system) / 1000 });
    }
  });
  const running = worker.run();
  send({ type: 'ready', rssBytes: process.memoryUsage.rss() });
  await running;
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpuAtStart);
  const mainAtEnd = mainThreadCpuMs();
  await connection.close();
  send({
    type: 'stopped',
    // ru_maxrss is the kernel's high-water mark (VmHWM), in KiB on Linux.
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    sampledPeakRssBytes: peak,
    cpuMs: (cpu.user + cpu.system) / 1000,
    ...(mainAtStart !== undefined && mainAtEnd !== undefined ? { mainThreadCpuMs: mainAtEnd - mainAtStart } : {}),
    ...(threadsAtStop ? { threadCpuMs: cpuByThread(threadsAtStart, threadsAtStop) } : {}),
  });
  process.disconnect?.();
}

/**
 * CPU time of this process's main thread (the thread whose id is the process id), from
 * /proc/self/task/<pid>/stat: user + system time in clock ticks (USER_HZ, 100 per second on Linux).
 * The rest of the process's CPU is its other threads: the workflow threads, V8's helper threads
 * (garbage collection, compilation) and the SDK's Rust core. Undefined where /proc is not there.
 */
function mainThreadCpuMs(): number | undefined {
  return taskCpu(process.pid)?.ms;
}

/** A thread's name and CPU time from /proc/self/task/<tid>/stat; undefined when it is gone or /proc is not there. */
function taskCpu(tid: number | string): { name: string; ms: number } | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    return Number.isFinite(ticks) ? { name, ms: ticks * 10 } : undefined;
  } catch {
    return undefined;
  }
}

/** Every live thread's CPU time by thread id (Linux); undefined elsewhere. */
function threadCpuMs(): Map<string, { name: string; ms: number }> | undefined {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  const threads = new Map<string, { name: string; ms: number }>();
  for (const tid of tids) {
    const cpu = taskCpu(tid);
    if (cpu) threads.set(tid, cpu);
  }
  return threads;
}

/**
 * CPU spent between two readings by thread: the main thread as `main`, each other thread with at
 * least 2 % of the total as `<name>[<tid>]` (Node names its workers and V8's helper threads `node`:
 * the busiest is the workflow thread), the rest summed by name. A thread that ended in between is
 * not counted (the process total still is).
 */
function cpuByThread(
  start: Map<string, { name: string; ms: number }> | undefined,
  end: Map<string, { name: string; ms: number }>,
): Record<string, number> {
  const spent = [...end].map(([tid, { name, ms }]) => ({ tid, name, ms: ms - (start?.get(tid)?.ms ?? 0) }));
  const total = spent.reduce((sum, t) => sum + Math.max(0, t.ms), 0);
  const out: Record<string, number> = {};
  for (const { tid, name, ms } of spent) {
    if (ms <= 0) continue;
    const key = tid === String(process.pid) ? 'main' : ms >= total * 0.02 ? `${name}[${tid}]` : `${name} (others)`;
    out[key] = (out[key] ?? 0) + ms;
  }
  return out;
}

function measure(worker: BenchWorker): WorkerMemory {
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const status = worker.getStatus();
  return {
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    cachedWorkflows: status.numCachedWorkflows,
    activationsInFlight: status.numInFlightWorkflowActivations,
    modelCalls,
  };
}

function send(message: WorkerProcessMessage): void {
  process.send?.(message);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
