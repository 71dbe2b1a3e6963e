import { NativeConnection } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import { createBenchModel } from './scenario';
import { createBenchWorker, installQuietRuntime } from './workers';

/**
 * One production worker (`createAgentWorker`, via the bench's `createBenchWorker`) with the bench's
 * scripted model, in a process of its own for the cluster figures: its memory is its own, and its
 * conversation cache is its own, as with separate `durable-agent worker` processes. Forked with a
 * JSON config; settings such as DURABLE_AGENT_STICKY_ACTIVITIES come from its environment (the
 * bench passes deploy/worker.env and the case's overrides). Reports `ready`, runs until `stop`,
 * then reports its peak RSS and CPU time.
 */
export interface ClusterWorkerConfig {
  address: string;
  /** The cluster's CA and server name (TLS), or none for a plaintext dev server. */
  tls?: { caPath: string; serverName: string };
  taskQueue: string;
  bundlePath: string;
  workspace: string;
  latencyMs: number;
  calls: number;
}

export type ClusterWorkerMessage =
  { type: 'ready'; rssBytes: number } | { type: 'stopped'; maxRssBytes: number; cpuMs: number };

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ClusterWorkerConfig;
  installQuietRuntime();
  const connection = await NativeConnection.connect({
    address: config.address,
    ...(config.tls
      ? {
          tls: {
            serverNameOverride: config.tls.serverName,
            serverRootCACertificate: readFileSync(config.tls.caPath),
          },
        }
      : {}),
  });
  const worker = await createBenchWorker({
    connection,
    taskQueue: config.taskQueue,
    bundlePath: config.bundlePath,
    subject: 'ours',
    model: createBenchModel({ calls: config.calls, latencyMs: config.latencyMs }),
    workspace: config.workspace,
    // Stock cluster settings dispatch nothing eagerly; the dev server does, as durable-agent embeds it.
    eager: !config.tls,
  });
  const cpuAtStart = process.cpuUsage();
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') worker.shutdown();
  });
  const running = worker.run();
  process.send?.({ type: 'ready', rssBytes: process.memoryUsage.rss() } satisfies ClusterWorkerMessage);
  await running;
  const cpu = process.cpuUsage(cpuAtStart);
  await connection.close();
  process.send?.({
    type: 'stopped',
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    cpuMs: (cpu.user + cpu.system) / 1000,
  } satisfies ClusterWorkerMessage);
  process.disconnect?.();
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
