import { msToNumber } from '@temporalio/common/lib/time';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { createActivities, type ActivityDeps } from '../activities';
import { PAYLOAD_CONVERTER_PATH, workerDataConverterFromEnv } from '../codec';
import { ensureSearchAttributes } from '../server/search-attributes';
import { ConnectionFailedError, connectFailureReason } from '../client';
import { connectionOptions, temporalConfig, type TemporalConfig } from '../client/config';
import { closeAllMcpConnections } from '../mcp';
import { createModelResolver } from '../models';
import { prefixedActivities } from '../shared/activity-names';
import { checkedDeployment, deploymentFromEnv, workerDeploymentOptions, type AgentDeployment } from './deployment';
import { createDefaultRegistry } from '../tools';
import { telemetryFromEnv } from '../telemetry/from-env';
import type { Telemetry } from '../telemetry/pipeline';
import { sandboxStatus, stopAllToolProcesses } from '../sandbox';
import { AGENT_WORKFLOW_MODULES, AGENT_WORKFLOW_MODULES_WITH_STACKS } from './workflow-bundle';
import { workerSlots } from './slots';
import {
  SHUTDOWN_FORCE_MARGIN_MS,
  STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT_MS,
  workerSettings,
  type WorkerSettings,
} from './settings';

/**
 * AgentWorkers running in this process. Tool processes are the process's, not one worker's: they
 * are stopped when the last worker stops (one per process in production; tests may run several).
 */
let runningWorkers = 0;

/** Runs a worker's lifetime; when it was the last one running, stops every process the tools started. */
export async function withToolProcessCleanup<T>(body: () => Promise<T>): Promise<T> {
  runningWorkers += 1;
  try {
    return await body();
  } finally {
    runningWorkers -= 1;
    if (runningWorkers === 0) {
      const stopped = await stopAllToolProcesses();
      if (stopped) Runtime.instance().logger.info(`stopped ${stopped} process group(s) the tools had left running`);
      // MCP connections are the process's too: stdio servers end, HTTP sessions are closed.
      await closeAllMcpConnections().catch(() => undefined);
    }
  }
}

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A prebuilt workflow bundle; without it the workflows are bundled at start (a few seconds). */
  workflowBundlePath?: string;
  /**
   * How long a shutting-down worker lets running activities finish before it cancels them.
   * Default: `DURABLE_AGENT_SHUTDOWN_GRACE`, else 10 s.
   */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  identity?: string;
  /**
   * Also poll a queue of this worker's own, and have runs send their next model and tool calls
   * there, so they find their conversation in this worker's cache (see docs/architecture.md, "History stays linear").
   * Default: `DURABLE_AGENT_STICKY_ACTIVITIES` (on unless `0`/`false`): with several workers and no
   * eager dispatch, a run's history stays linear only when its calls follow its workflow's worker.
   */
  stickyActivities?: boolean;
  /**
   * Payload codec and failure converter. Default: `workerDataConverterFromEnv()` (encrypted payloads
   * when `DURABLE_AGENT_CODEC_KEYS` is set). Either way the payload converter is the one that turns a
   * client's undecodable payload into a value the workflow rejects (`PAYLOAD_CONVERTER_PATH`).
   */
  dataConverter?: DataConverter;
  /** Traces and metrics (docs/observability.md). Default: `telemetryFromEnv()`; `false` turns them off. */
  telemetry?: Telemetry | false;
  /** Extra Worker options, applied to every Temporal worker this creates (benchmarks, tuning). */
  workerOptions?: Partial<WorkerOptions>;
  /**
   * The Worker Deployment Version this worker belongs to: runs are pinned to it (docs/upgrading.md).
   * Default: `DURABLE_AGENT_DEPLOYMENT_NAME` + `DURABLE_AGENT_BUILD_ID`; `false` or neither set: unversioned.
   */
  deployment?: AgentDeployment | false;
  /**
   * Keep the SDK's per-promise stack traces of runs (the Web UI's Stack Trace tab, `temporal workflow
   * stack`). Off by default: the agent's bundles turn them off, which saves about 0.8 ms of worker CPU
   * per iteration (src/workflows/sdk/promise-stacks.ts, docs/benchmarks.md). On, the worker bundles its
   * workflows at start (a few seconds) unless `workflowBundlePath` names a bundle. Default:
   * `DURABLE_AGENT_WORKFLOW_STACK_TRACES`.
   */
  workflowStackTraces?: boolean;
}

/**
 * The Temporal worker(s) of one durable-agent process: the main worker (workflows and activities
 * on the shared queue) and, with sticky activities, an activity worker on this process's own
 * queue. Both share one set of activities, hence one conversation cache.
 */
export class AgentWorker {
  constructor(
    private readonly main: Worker,
    private readonly sticky: Worker | undefined,
    /** This process's own activity queue, when sticky activities are on. */
    readonly stickyQueue: string | undefined,
  ) {}

  private get all(): Worker[] {
    return this.sticky ? [this.main, this.sticky] : [this.main];
  }

  getState(): ReturnType<Worker['getState']> {
    return this.main.getState();
  }

  /** The main worker's status: cached runs, activations and activities in flight. */
  getStatus(): ReturnType<Worker['getStatus']> {
    return this.main.getStatus();
  }

  /**
   * Polls until shut down. Then, before it resolves, every process a tool started and that still
   * runs (a background process of an unsandboxed command, a command that ignored its cancellation)
   * gets SIGTERM and, a second later, SIGKILL.
   */
  async run(): Promise<void> {
    await withToolProcessCleanup(() => Promise.all(this.all.map((w) => w.run())));
  }

  shutdown(): void {
    for (const w of this.all) if (w.getState() === 'RUNNING') w.shutdown();
  }

  /** Runs until `fnOrPromise` settles, then shuts down and returns (or throws) its outcome. */
  async runUntil<R>(fnOrPromise: Promise<R> | (() => Promise<R>)): Promise<R> {
    const promise = typeof fnOrPromise === 'function' ? fnOrPromise() : fnOrPromise;
    const [result] = await withToolProcessCleanup(() => Promise.all(this.all.map((w) => w.runUntil(promise))));
    return result as R;
  }
}

export {
  DEFAULT_MAX_CACHED_RUNS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DEFAULT_WORKFLOW_TASK_SLOTS,
  SHUTDOWN_FORCE_MARGIN_MS,
  STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT_MS,
  formatMs,
  parseDurationSetting,
  workerSettings,
  type WorkerSettings,
} from './settings';
export { workerSlots } from './slots';

/**
 * The bundle `npm run build` writes next to the compiled worker, if present. A worker whose data
 * converter has a failure converter (the encryption codec) needs the bundle built with it, since
 * workflow failures are converted inside the sandbox: `workflow-bundle-codec.js`. With telemetry on,
 * the bundle with the tracing interceptors: `-otel` before `.js`.
 */
export function prebuiltBundlePath(withFailureConverter = false, withTelemetry = false): string | undefined {
  const candidate = path.join(
    __dirname,
    '..',
    '..',
    `workflow-bundle${withFailureConverter ? '-codec' : ''}${withTelemetry ? '-otel' : ''}.js`,
  );
  return existsSync(candidate) ? candidate : undefined;
}

export async function createAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  const log = Runtime.instance().logger;

  // The worker's environment settings, read once (each read validates every variable).
  const settings = workerSettings();
  const graceMs =
    options.shutdownGraceTime !== undefined ? msToNumber(options.shutdownGraceTime) : settings.shutdownGraceMs;
  const sticky = options.stickyActivities ?? settings.stickyActivities;
  const stickyQueue = sticky
    ? `${options.taskQueue}@${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
    : undefined;
  const activities = workerActivities(
    createActivities({ ...options.deps, ...(stickyQueue ? { workerQueue: stickyQueue } : {}) }),
    options.workerOptions?.activities,
  );
  const dataConverter: DataConverter = {
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    ...(options.dataConverter ?? workerDataConverterFromEnv()),
  };
  const telemetry = options.telemetry === undefined ? telemetryFromEnv() : options.telemetry || undefined;
  const stackTraces = options.workflowStackTraces ?? settings.workflowStackTraces;
  if (stackTraces && options.workflowBundlePath) {
    log.warn(`workflow stack traces: the worker uses the bundle it was given as it is (${options.workflowBundlePath})`);
  }
  const bundle =
    options.workflowBundlePath ??
    (stackTraces ? undefined : prebuiltBundlePath(dataConverter.failureConverterPath !== undefined, !!telemetry));
  const common = {
    connection: options.connection,
    namespace: options.namespace,
    dataConverter,
    // Cancellation reaches an activity only through a heartbeat response: keep the gap short so
    // an interrupt stops running tools and model calls within seconds.
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    // Shutdown: stop polling, let running activities finish for the grace period, then cancel them
    // (a cancelled model call fails retryably, so another worker takes it at once); a worker whose
    // activities ignore the cancellation still stops after the margin instead of hanging.
    // A workflow task waits this long on the queue of the worker that cached the run before any
    // worker may take it. When that worker was killed, every run it cached stalls this long; a
    // live worker takes its tasks within milliseconds, so 3 s (SDK default 10 s) costs nothing.
    stickyQueueScheduleToStartTimeout: STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT_MS,
    // A bound on the memory cached runs (waiting sessions among them) hold; see DEFAULT_MAX_CACHED_RUNS.
    maxCachedWorkflows: settings.maxCachedRuns,
    ...workerSlots(settings, options.workerOptions),
    shutdownGraceTime: graceMs,
    shutdownForceTime: graceMs + SHUTDOWN_FORCE_MARGIN_MS,
    ...(options.identity ? { identity: options.identity } : {}),
    ...telemetry?.workerOptions(bundle !== undefined, options.deps.tools),
    ...options.workerOptions,
    activities,
  } satisfies Partial<WorkerOptions>;
  try {
    const added = await ensureSearchAttributes(options.connection.operatorService, options.namespace);
    if (added.length) log.info(`registered search attributes ${added.join(', ')} in namespace ${options.namespace}`);
  } catch (err) {
    log.warn(
      `could not check or register durable-agent's search attributes (${(err as Error).message}); runs fail their ` +
        `workflow tasks until they exist: temporal operator search-attribute create (see docker-compose.yml)`,
    );
  }
  const sandbox = sandboxStatus();
  if (sandbox.mode !== 'bwrap') log.warn(sandbox.detail);
  const deployment = options.deployment === undefined ? deploymentFromEnv() : options.deployment || undefined;
  const main = await Worker.create({
    ...common,
    taskQueue: options.taskQueue,
    ...workflowsOf(options.workerOptions, bundle, stackTraces),
    // Only the workflow's queue is versioned: this process's own activity queue stays out of the version.
    ...(deployment ? { workerDeploymentOptions: workerDeploymentOptions(checkedDeployment(deployment)) } : {}),
  });
  // Activities only: no workflows are bundled or polled for on this process's own queue.
  const own = stickyQueue
    ? await Worker.create({ ...common, taskQueue: stickyQueue, workflowsPath: undefined, workflowBundle: undefined })
    : undefined;
  return new AgentWorker(main, own, stickyQueue);
}

/**
 * The agent's activities under their prefixed names (`durableAgent.callModel`) and, for runs
 * recorded before the prefix, their bare names, next to the caller's own `extra` activities. A
 * bare name the caller also uses stays the caller's; a prefixed one may not be taken.
 */
export function workerActivities(agent: Record<string, unknown>, extra: object | undefined): Record<string, unknown> {
  const own = { ...(extra as Record<string, unknown> | undefined) };
  const prefixed = prefixedActivities(agent);
  const clash = Object.keys(prefixed).filter((name) => name in own);
  if (clash.length) throw new Error(`activity names reserved by durable-agent: ${clash.join(', ')}`);
  return { ...agent, ...own, ...prefixed };
}

/**
 * The caller's workflows when `workerOptions` names any, else the agent's (bundle or source). Bundled
 * at start, they get the agent's preloaded modules, without its stack formatting when `stackTraces`.
 */
function workflowsOf(
  workerOptions: Partial<WorkerOptions> | undefined,
  bundle: string | undefined,
  stackTraces: boolean,
): Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle' | 'bundlerOptions'> {
  if (workerOptions?.workflowsPath !== undefined || workerOptions?.workflowBundle !== undefined) return {};
  if (bundle) return { workflowBundle: { codePath: bundle } };
  const preloadModules = [...(stackTraces ? AGENT_WORKFLOW_MODULES_WITH_STACKS : AGENT_WORKFLOW_MODULES)];
  return {
    workflowsPath: require.resolve('../workflows'),
    bundlerOptions: { ...workerOptions?.bundlerOptions, preloadModules },
  };
}

/** The production wiring: real model providers and built-in tools. */
export function defaultActivityDeps(settings: WorkerSettings = workerSettings()): ActivityDeps {
  const anthropic = settings.modelIdleTimeoutMs !== undefined ? { idleTimeoutMs: settings.modelIdleTimeoutMs } : {};
  return {
    models: createModelResolver({ anthropic }),
    tools: createDefaultRegistry(),
    defaultWorkspace: process.cwd(),
    cancelWatchMs: settings.cancelWatchMs,
  };
}

/** The worker's connection, made as `config` says (TLS, mTLS, API key, gRPC metadata). */
export async function connectWorker(config: TemporalConfig = temporalConfig()): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(connectionOptions(config));
  } catch (err) {
    throw new ConnectionFailedError(config, await connectFailureReason(config, err), err);
  }
}
