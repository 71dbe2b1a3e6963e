import { stateQuery } from '../src/shared';
import { settle, startRun, uniqueName } from './context';
import { bundleBenchWorkflows, connectBenchClient, makeWorkDir, startBenchServer } from './server';
import { distribution, ms } from './stats';
import { forkBenchWorker, nextMessage, stopChild } from './worker-child';
import type { WorkerProcessConfig } from './worker-process';

/**
 * `node dist/bench/query-latency.js [runs=120] [iterations=10] [latencyMs=100] [wftSlots]`: how fast the
 * `state` query answers while many runs are busy on one worker (issue 18: p95 6.7 s with 120 runs).
 * One worker process (default options) runs `runs` agent runs of `iterations` iterations with a
 * scripted model of `latencyMs` per call; meanwhile 4 clients query `state` of random runs back to
 * back. `wftSlots` sets the worker's maxConcurrentWorkflowTaskExecutions (default: the production
 * worker's). Prints the query latency distribution and the runs' wall time. `BENCH_CPU_PROF=<dir>` writes
 * CPU profiles of the worker's threads there.
 */
async function main(): Promise<void> {
  const [runs = 120, iterations = 10, latencyMs = 100, wftSlots] = process.argv.slice(2).map(Number);
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const workDir = await makeWorkDir();
  const server = await startBenchServer('embedded', workDir, log);
  const bundlePath = await bundleBenchWorkflows(workDir);
  const client = await connectBenchClient(server);
  const taskQueue = uniqueName('query-latency');
  const config: WorkerProcessConfig = {
    address: server.address,
    taskQueue,
    bundlePath,
    subject: 'ours',
    eager: true,
    latencyMs,
    calls: runs * (iterations + 1) + 16,
    workspace: workDir,
    ...(wftSlots ? { workerOptions: { maxConcurrentWorkflowTaskExecutions: wftSlots } } : {}),
  };
  const child = forkBenchWorker(config, { label: 'query-latency' });
  try {
    await nextMessage(child, 'ready');
    const started = performance.now();
    const handles = await Promise.all(
      Array.from({ length: runs }, () =>
        startRun(client, { subject: 'ours', taskQueue, iterations, outputBytes: 1024 }),
      ),
    );
    let done = false;
    const latencies: number[] = [];
    let failures = 0;
    const queriers = Array.from({ length: 4 }, async () => {
      while (!done) {
        const handle = handles[Math.floor(Math.random() * handles.length)]!;
        const t0 = performance.now();
        try {
          await handle.query(stateQuery);
          latencies.push(performance.now() - t0);
        } catch {
          failures += 1;
        }
      }
    });
    const settled = await Promise.all(handles.map((h) => settle(h, 600_000)));
    const wallMs = performance.now() - started;
    done = true;
    await Promise.all(queriers);
    const d = distribution(latencies);
    process.stdout.write(
      `${runs} runs × ${iterations} iterations (model ${latencyMs} ms) on one worker: ` +
        `${settled.filter((s) => s.ok).length}/${runs} completed in ${(wallMs / 1000).toFixed(1)} s\n` +
        `state query while they ran: n=${d.n} median ${ms(d.median)} p95 ${ms(d.p95)} max ${ms(Math.max(...latencies))}` +
        ` (${failures} failed)\n`,
    );
    await stopChild(child);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await client.connection.close();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
