import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import { ScriptedModel, text, type ScriptStep, type ScriptedFunction } from '../src/models/scripted';
import { connectWorker } from '../src/worker';
import { createBenchModel } from './scenario';
import { benchConnectionFor } from './server';
import { createBenchWorker, installQuietRuntime, type BenchWorker, type Subject } from './workers';

/**
 * A bench worker in its own process, so its memory is measured alone (throughput, idle sessions,
 * query latency). Started by the bench with `fork`, configured by a JSON argument; it reports
 * `ready`, answers `measure` with its memory and cache, runs until told to `stop`, then reports its
 * peak RSS and CPU time and exits.
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
  | {
      type: 'stopped';
      maxRssBytes: number;
      sampledPeakRssBytes: number;
      cpuMs: number;
      /** CPU of the process's main thread alone (activities, the SDK's main-side work); Linux only. */
      mainThreadCpuMs?: number;
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
  const cpuAtStart = process.cpuUsage();
  const mainAtStart = mainThreadCpuMs();
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') worker.shutdown();
    if (message.type === 'measure') send({ type: 'memory', ...measure(worker) });
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
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined;
  } catch {
    return undefined;
  }
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
