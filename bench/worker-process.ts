import { connectWorker } from '../src/worker';
import { createBenchModel } from './scenario';
import { benchConnectionFor } from './server';
import { createBenchWorker, installQuietRuntime, type Subject } from './workers';

/**
 * A bench worker in its own process, so its memory is measured alone (figure 3). Started by the
 * bench with `fork`, configured by a JSON argument; it reports `ready`, runs until told to `stop`,
 * then reports its peak RSS and CPU time and exits.
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
}

export type WorkerProcessMessage =
  | { type: 'ready'; rssBytes: number }
  | { type: 'stopped'; maxRssBytes: number; sampledPeakRssBytes: number; cpuMs: number };

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkerProcessConfig;
  installQuietRuntime();
  let peak = process.memoryUsage.rss();
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 25);
  // The bench server's connection (TLS, API key, namespace) when it is the configured external one.
  const conn = benchConnectionFor(config.address);
  const connection = await connectWorker(conn);
  const worker = await createBenchWorker({
    connection,
    namespace: conn.namespace,
    taskQueue: config.taskQueue,
    bundlePath: config.bundlePath,
    subject: config.subject,
    model: createBenchModel({ calls: config.calls, latencyMs: config.latencyMs }),
    workspace: config.workspace,
    eager: config.eager,
  });
  const cpuAtStart = process.cpuUsage();
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') worker.shutdown();
  });
  const running = worker.run();
  send({ type: 'ready', rssBytes: process.memoryUsage.rss() });
  await running;
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpuAtStart);
  await connection.close();
  send({
    type: 'stopped',
    // ru_maxrss is the kernel's high-water mark (VmHWM), in KiB on Linux.
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    sampledPeakRssBytes: peak,
    cpuMs: (cpu.user + cpu.system) / 1000,
  });
  process.disconnect?.();
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
