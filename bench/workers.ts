import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { dataConverterFromEnv } from '../src/codec';
import type { ModelProvider } from '../src/models/types';
import type { ToolRegistry } from '../src/tools';
import { DEFAULT_NAMESPACE } from '../src/shared';
import { createAgentWorker, type AgentWorker } from '../src/worker';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { settle, startRun } from './context';
import { createNaiveActivities } from './naive-activities';
import { createBenchRegistry } from './scenario';
import { naiveBundleOf } from './server';

/** Which loop a worker serves: ours (`agentWorkflow`, the production worker) or the naive baseline. */
export type Subject = 'ours' | 'naive';

export interface BenchWorkerOptions {
  connection: NativeConnection;
  /** Default `default`; an existing server's configured namespace (`BenchServer.connection.namespace`). */
  namespace?: string;
  taskQueue: string;
  bundlePath: string;
  subject: Subject;
  model: ModelProvider;
  workspace: string;
  /** Let the worker take activities eagerly when it completes a workflow task (the SDK default). */
  eager: boolean;
  /** The tools (default the bench registry: `emit_output`, `emit_output_local`, `read_file`). */
  tools?: ToolRegistry;
  /** Worker options on top of the subject's own (cache size, slots). */
  workerOptions?: Partial<WorkerOptions>;
}

/** Eager dispatch off, for the whole worker. */
const NO_EAGER: Partial<WorkerOptions> = { maxEagerActivityReservationsPerWorkflowTask: 0 };

/**
 * Ours runs on the production worker (`createAgentWorker`: its activities, cache and options); the
 * naive baseline on a worker with the same heartbeat settings and the naive activities. Each gets
 * its bench bundle (`bundleBenchWorkflows`), which holds its own workflow only: ours is preloaded as
 * the production bundle is, the naive one with the SDK's defaults (only zod shared, as before).
 */
/** What the bench needs of a worker: ours (an AgentWorker) and the naive one (a plain Worker) both fit. */
export type BenchWorker = Pick<AgentWorker, 'run' | 'runUntil' | 'shutdown' | 'getState' | 'getStatus'>;

export async function createBenchWorker(options: BenchWorkerOptions): Promise<BenchWorker> {
  const tools = options.tools ?? createBenchRegistry();
  if (options.subject === 'ours') {
    return createAgentWorker({
      connection: options.connection,
      namespace: options.namespace ?? DEFAULT_NAMESPACE,
      taskQueue: options.taskQueue,
      workflowBundlePath: options.bundlePath,
      deps: { models: () => options.model, tools, defaultWorkspace: options.workspace },
      workerOptions: { ...(options.eager ? {} : NO_EAGER), ...options.workerOptions },
    });
  }
  // Ours reads DURABLE_AGENT_CODEC_KEYS in createAgentWorker; the baseline encrypts alike.
  const dataConverter = dataConverterFromEnv();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? DEFAULT_NAMESPACE,
    ...(dataConverter ? { dataConverter } : {}),
    taskQueue: options.taskQueue,
    workflowBundle: { codePath: naiveBundleOf(options.bundlePath) },
    activities: createNaiveActivities({ models: () => options.model, tools, workspace: options.workspace }),
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    ...(options.eager ? {} : NO_EAGER),
    ...options.workerOptions,
  });
}

/**
 * Errors only, from the SDK and from Core: the naive baseline trips payload-size warnings on purpose
 * (figure 1 reports them as data) and expected failures would otherwise bury the report.
 */
export function installQuietRuntime(): void {
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
  });
}

/** Runs the workers while `fn` runs, then shuts them down and waits for them to stop. */
export async function withWorkers<T>(workers: BenchWorker[], fn: () => Promise<T>): Promise<T> {
  const running = workers.map((w) => w.run());
  try {
    return await fn();
  } finally {
    for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
    await Promise.allSettled(running);
  }
}

/**
 * One run of the bench agent, start to end, on a worker of its own (shut down after): the recording
 * step of the benches that then replay it without a server (workflow-cpu, activity-cpu).
 */
export async function runOnce(
  client: Client,
  options: BenchWorkerOptions & { iterations: number; outputBytes: number },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const { iterations, outputBytes, ...workerOptions } = options;
  const worker = await createBenchWorker(workerOptions);
  return withWorkers([worker], async () => {
    const handle = await startRun(client, {
      subject: options.subject,
      taskQueue: options.taskQueue,
      iterations,
      outputBytes,
    });
    const outcome = await settle(handle, 120_000);
    if (!outcome.ok) throw new Error(`the ${options.subject} run did not complete: ${outcome.error}`);
    return handle;
  });
}
