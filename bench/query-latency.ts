import { runStatus } from '../src/cli/run-status';
import { STATUS_LIVE_TIMEOUT_MS } from '../src/cli/server-record';
import { stateQuery } from '../src/shared';
import { settle, startRun, uniqueName } from './context';
import { bundleBenchWorkflows, connectBenchClient, makeWorkDir, startBenchServer } from './server';
import { distribution, ms } from './stats';
import { forkBenchWorker, nextMessage, stopChild } from './worker-child';
import type { BenchWorkerTuning, WorkerProcessConfig } from './worker-process';

/**
 * `node dist/bench/query-latency.js [runs=120] [iterations=10] [latencyMs=100] [wftSlots]`: how fast the
 * `state` query answers while many runs are busy on one worker (issue 18: p95 6.7 s with 120 runs).
 * One worker process (default options) runs `runs` agent runs of `iterations` iterations with a
 * scripted model of `latencyMs` per call; meanwhile 4 clients query `state` of random runs back to
 * back. `wftSlots` sets the worker's maxConcurrentWorkflowTaskExecutions (default: the production
 * worker's); `BENCH_WORKER_OPTIONS='{"workflowThreadPoolSize":2}'` sets other worker options (JSON, on top).
 * Prints the query latency distribution, the runs' wall time and the worker's CPU and peak RSS.
 * `BENCH_CPU_PROF=<dir>` writes CPU profiles of the worker's threads there. `BENCH_QUERY_PAUSE_MS=<ms>`
 * makes each client wait that long after each answer. `BENCH_QUERY_VIA=status` asks as `durable-agent status`
 * does (`runStatus`: describe, the query with a short patience, else the server's record) and counts the
 * fallbacks; `BENCH_QUERY_VIA=status-live` as `status --live` (the query may take 10 s, as `status` before).
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
    workerOptions: {
      ...(JSON.parse(process.env.BENCH_WORKER_OPTIONS ?? '{}') as BenchWorkerTuning),
      ...(wftSlots ? { maxConcurrentWorkflowTaskExecutions: wftSlots } : {}),
    },
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
    // BENCH_QUERY_CLASSIFY=1: describe the run first and sort each query by whether the run had a
    // workflow task scheduled or started then (the server holds a query back until that task is done).
    const classify = process.env.BENCH_QUERY_CLASSIFY === '1';
    // BENCH_QUERY_PAUSE_MS: each client waits this long after each answer (default 0: back to back), which
    // bounds the query load (4 clients: at most 20 a second at 200 ms) when the answers come fast.
    const pauseMs = Number(process.env.BENCH_QUERY_PAUSE_MS ?? 0);
    if (!Number.isInteger(pauseMs) || pauseMs < 0) {
      throw new Error(
        `BENCH_QUERY_PAUSE_MS must be a whole number of milliseconds, got '${process.env.BENCH_QUERY_PAUSE_MS}'`,
      );
    }
    // `status-live`: as `status --live` (and `status` before issue 44): the query waits up to 10 s.
    const via = process.env.BENCH_QUERY_VIA;
    const viaStatus = via === 'status' || via === 'status-live';
    const statusOptions = via === 'status-live' ? { queryTimeoutMs: STATUS_LIVE_TIMEOUT_MS } : {};
    let fromServer = 0;
    const byTask: Record<'pending' | 'none', number[]> = { pending: [], none: [] };
    const describeMs: number[] = [];
    let failures = 0;
    const queriers = Array.from({ length: 4 }, async () => {
      while (!done) {
        const handle = handles[Math.floor(Math.random() * handles.length)]!;
        try {
          let pending: boolean | undefined;
          if (classify) {
            const d0 = performance.now();
            const described = await client.workflowService.describeWorkflowExecution({
              namespace: client.options.namespace,
              execution: { workflowId: handle.workflowId },
            });
            describeMs.push(performance.now() - d0);
            pending = !!described.pendingWorkflowTask;
          }
          const t0 = performance.now();
          if (viaStatus) {
            if ((await runStatus(client, handle.workflowId, statusOptions)).source !== 'query') fromServer += 1;
          } else await handle.query(stateQuery);
          const took = performance.now() - t0;
          latencies.push(took);
          if (pending !== undefined) byTask[pending ? 'pending' : 'none'].push(took);
        } catch {
          failures += 1;
        }
        if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    });
    const settled = await Promise.all(handles.map((h) => settle(h, 600_000)));
    const wallMs = performance.now() - started;
    done = true;
    await Promise.all(queriers);
    const d = distribution(latencies);
    const stopped = await stopChild(child);
    // Workflow tasks that timed out (a sticky task not taken within the sticky schedule-to-start
    // timeout moves to the shared queue, and the worker may rebuild the run by replay).
    let timedOut = 0;
    let events = 0;
    for (const handle of handles.slice(0, 20)) {
      const history = await handle.fetchHistory();
      events += history.events?.length ?? 0;
      timedOut += history.events?.filter((e) => e.workflowTaskTimedOutEventAttributes).length ?? 0;
    }
    process.stdout.write(
      `${runs} runs × ${iterations} iterations (model ${latencyMs} ms) on one worker: ` +
        `${settled.filter((s) => s.ok).length}/${runs} completed in ${(wallMs / 1000).toFixed(1)} s\n` +
        `${viaStatus ? 'status' : 'state query'} while they ran: n=${d.n} median ${ms(d.median)} p95 ${ms(d.p95)} max ${ms(Math.max(...latencies))}` +
        ` (${failures} failed)${viaStatus ? `, as status: ${fromServer} answered from the server's record` : ''}\n` +
        (classify
          ? `  run had a workflow task pending: ${line(byTask.pending)}; none pending: ${line(byTask.none)}; ` +
            `describe (server only): ${line(describeMs)}\n`
          : '') +
        `worker: ${(stopped.cpuMs / (runs * iterations)).toFixed(1)} ms CPU per iteration, ` +
        (pauseMs > 0 ? `queries paced: ${pauseMs} ms between each client's queries, ` : '') +
        `peak RSS ${(stopped.maxRssBytes / 2 ** 20).toFixed(0)} MiB, options ${JSON.stringify(config.workerOptions)}\n` +
        `first 20 runs: ${events} events, ${timedOut} workflow tasks timed out\n`,
    );
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await client.connection.close();
    await server.stop();
  }
}

function line(values: number[]): string {
  const d = distribution(values);
  return `n=${d.n} median ${ms(d.median)} p95 ${ms(d.p95)}`;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
