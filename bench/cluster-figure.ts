import { Client, Connection } from '@temporalio/client';
import { fork, type ChildProcess } from 'node:child_process';
import { deployedWorkerEnv } from '../scripts/cluster/deploy-files';
import { startCluster, type Cluster } from '../scripts/cluster/cluster';
import { settle, startRun, uniqueName } from './context';
import type { ClusterWorkerConfig, ClusterWorkerMessage } from './cluster-worker';
import { measureChain } from './history';
import { writeBenchDoc } from './scenario';
import { startBenchServer } from './server';
import { distribution, type Distribution } from './stats';

/**
 * Issue 12's figures on a real cluster (scripts/cluster: the Temporal server from Go on PostgreSQL,
 * TLS, stock dynamic config, so no eager activity dispatch) with workers in processes of their own,
 * running the deployment's worker settings (deploy/worker.env) unless a case overrides them:
 *
 * (a) throughput: 200 runs × 10 iterations at 100 ms model latency over three workers: wall time vs
 *     the ideal (every run's 11 model calls back to back), iterations/s, peak RSS per worker;
 * (b) history: the same 60-iteration run reading a 5 KB file each turn, its history bytes per
 *     iteration (all executions of the chain) on the cluster with 3 workers (routing off and on) vs
 *     1 worker, and on the dev server durable-agent embeds.
 */
export interface ClusterThroughput {
  runs: number;
  iterations: number;
  modelLatencyMs: number;
  workers: number;
  completed: number;
  wallMs: number;
  idealMs: number;
  iterationsPerSecond: number;
  runDurationMs: Distribution;
  workerPeakRssBytes: number[];
  workerCpuMs: number[];
}

export interface ClusterHistoryRow {
  label: string;
  server: 'cluster' | 'dev server';
  workers: number;
  env: Record<string, string>;
  outcome: string;
  executions: number;
  totalBytes: number;
  bytesPerIteration: number;
  toolCallsCompleted: number;
  /** This row's bytes over the 1-worker cluster row's (issue 12's target: ≤ 1.5). */
  vsOneWorker?: number;
}

export interface ClusterFigure {
  server: string;
  throughput?: ClusterThroughput;
  history: ClusterHistoryRow[];
}

const HISTORY_ITERATIONS = 60;
const HISTORY_FILE_BYTES = 5 * 1024;

export async function measureCluster(options: {
  bundlePath: string;
  workspace: string;
  workDir: string;
  quick: boolean;
  log: (m: string) => void;
}): Promise<ClusterFigure> {
  const { log } = options;
  const cluster = await startCluster({ log });
  const connection = await Connection.connect({
    ...cluster.connectionOptions(),
    channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
  });
  const client = new Client({ connection, namespace: cluster.namespace });
  try {
    await writeBenchDoc(options.workspace, HISTORY_FILE_BYTES);
    const fleetOn =
      (address: string, tls: Cluster['tls'] | undefined) =>
      (count: number, env: Record<string, string>, calls?: number) =>
        startWorkers(count, { address, ...(tls ? { tls } : {}), ...options }, env, calls);

    const history: ClusterHistoryRow[] = [];
    const cases: Array<{ label: string; workers: number; env: Record<string, string> }> = [
      { label: '3 workers, deploy/worker.env', workers: 3, env: deployedWorkerEnv() },
      { label: '3 workers, routing off', workers: 3, env: { DURABLE_AGENT_STICKY_ACTIVITIES: '0' } },
      {
        label: '3 workers, DURABLE_AGENT_STICKY_ACTIVITIES=1',
        workers: 3,
        env: { DURABLE_AGENT_STICKY_ACTIVITIES: '1' },
      },
      { label: '1 worker', workers: 1, env: {} },
    ];
    for (const c of cases) {
      history.push(await historyRow(client, fleetOn(cluster.address, cluster.tls), c, 'cluster', log));
    }
    // The dev server as durable-agent embeds it (eager dispatch on), one worker.
    const dev = await startBenchServer('embedded', options.workDir, log);
    try {
      const devConnection = await Connection.connect({
        address: dev.address,
        channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
      });
      try {
        const devClient = new Client({ connection: devConnection });
        const row = { label: '1 worker', workers: 1, env: {} };
        history.push(await historyRow(devClient, fleetOn(dev.address, undefined), row, 'dev server', log));
      } finally {
        await devConnection.close();
      }
    } finally {
      await dev.stop();
    }
    const base = history.find((r) => r.server === 'cluster' && r.workers === 1);
    for (const row of history) if (base) row.vsOneWorker = row.totalBytes / base.totalBytes;

    const throughput = await measureThroughput(client, fleetOn(cluster.address, cluster.tls), options.quick, log);
    return { server: `Temporal server ${cluster.address} on PostgreSQL (scripts/cluster)`, throughput, history };
  } finally {
    await connection.close();
    await cluster.stop();
  }
}

type StartFleet = (count: number, env: Record<string, string>, calls?: number) => Promise<Fleet>;

async function historyRow(
  client: Client,
  startFleet: StartFleet,
  c: { label: string; workers: number; env: Record<string, string> },
  server: ClusterHistoryRow['server'],
  log: (m: string) => void,
): Promise<ClusterHistoryRow> {
  const fleet = await startFleet(c.workers, c.env);
  try {
    const handle = await startRun(client, {
      subject: 'ours',
      taskQueue: fleet.taskQueue,
      iterations: HISTORY_ITERATIONS,
      outputBytes: HISTORY_FILE_BYTES,
      tool: 'read_file',
    });
    const settled = await settle(handle, 600_000);
    const { size } = await measureChain(client, handle.workflowId, handle.firstExecutionRunId);
    const row: ClusterHistoryRow = {
      label: c.label,
      server,
      workers: c.workers,
      env: c.env,
      outcome: settled.ok ? size.outcome : (settled.error ?? size.outcome),
      executions: size.runs.length,
      totalBytes: size.totalBytes,
      bytesPerIteration: size.totalBytes / HISTORY_ITERATIONS,
      toolCallsCompleted: size.toolCallsCompleted,
    };
    log(
      `cluster history: ${server}, ${c.label}: ${row.totalBytes} B over ${row.executions} execution(s), ${row.outcome}`,
    );
    return row;
  } finally {
    await fleet.stop();
  }
}

async function measureThroughput(
  client: Client,
  startFleet: StartFleet,
  quick: boolean,
  log: (m: string) => void,
): Promise<ClusterThroughput> {
  const runs = quick ? 50 : 200;
  const iterations = 10;
  const modelLatencyMs = 100;
  const fleet = await startFleet(3, deployedWorkerEnv(), runs * (iterations + 1) + 16);
  let stopped: Array<Extract<ClusterWorkerMessage, { type: 'stopped' }>> = [];
  const durations: number[] = [];
  let completed = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: runs }, async () => {
        const t0 = performance.now();
        const handle = await startRun(client, {
          subject: 'ours',
          taskQueue: fleet.taskQueue,
          iterations,
          outputBytes: 1024,
        });
        const settled = await settle(handle, 600_000);
        durations.push(performance.now() - t0);
        if (settled.ok) completed += 1;
      }),
    );
  } finally {
    stopped = await fleet.stop();
  }
  const wallMs = performance.now() - started;
  log(`cluster throughput: ${completed}/${runs} runs in ${(wallMs / 1000).toFixed(1)} s`);
  return {
    runs,
    iterations,
    modelLatencyMs,
    workers: 3,
    completed,
    wallMs,
    // Every run's calls back to back at the model's latency (tools take no time): iterations + the summary call.
    idealMs: (iterations + 1) * modelLatencyMs,
    iterationsPerSecond: (completed * iterations) / (wallMs / 1000),
    runDurationMs: distribution(durations),
    workerPeakRssBytes: stopped.map((s) => s.maxRssBytes),
    workerCpuMs: stopped.map((s) => s.cpuMs),
  };
}

interface Fleet {
  taskQueue: string;
  stop(): Promise<Array<Extract<ClusterWorkerMessage, { type: 'stopped' }>>>;
}

async function startWorkers(
  count: number,
  base: Pick<ClusterWorkerConfig, 'address' | 'tls' | 'bundlePath' | 'workspace'>,
  env: Record<string, string>,
  calls = 5000,
): Promise<Fleet> {
  const taskQueue = uniqueName('cluster');
  const config: ClusterWorkerConfig = { ...base, taskQueue, latencyMs: 100, calls };
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    children.push(
      fork(require.resolve('./cluster-worker'), [JSON.stringify(config)], {
        stdio: 'inherit',
        env: { ...process.env, DURABLE_AGENT_STICKY_ACTIVITIES: '', ...env },
      }),
    );
  }
  await Promise.all(children.map((c) => next(c, 'ready')));
  return {
    taskQueue,
    async stop() {
      return Promise.all(
        children.map((c) => {
          const done = next(c, 'stopped');
          c.send({ type: 'stop' });
          return done;
        }),
      );
    },
  };
}

function next<K extends ClusterWorkerMessage['type']>(
  child: ChildProcess,
  type: K,
): Promise<Extract<ClusterWorkerMessage, { type: K }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: ClusterWorkerMessage) => {
      if (m.type !== type) return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolve(m as Extract<ClusterWorkerMessage, { type: K }>);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`a cluster bench worker exited (${code}) before '${type}'`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
