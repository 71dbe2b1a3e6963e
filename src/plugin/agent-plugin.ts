import type { ClientOptions, ConnectionOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, NativeConnectionOptions, Worker, WorkerOptions } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { createActivities, ConversationCache, type ActivityDeps } from '../activities';
import { FAILURE_CONVERTER_PATH, PAYLOAD_CONVERTER_PATH, codecFromEnv } from '../codec';
import { prefixedActivities } from '../shared/activity-names';
import { checkedDeployment, deploymentFromEnv, workerDeploymentOptions } from '../worker/deployment';
import { DEFAULT_SHUTDOWN_GRACE_MS, workerSettings } from '../worker';
import { environmentConnection, withEnvironmentDefaults } from './connection-defaults';
import { activityDeps, checkOptions, type AgentPluginOptions } from './options';
import { runWithCompanion, type Companion } from './worker-companion';
import { singleWorkflowPackage, withSharedWorkflowModules } from './bundler';

/** The worker settings the agent needs, applied where the user's own options leave them out. */
export const AGENT_WORKER_DEFAULTS = {
  // Cancellation reaches an activity only through a heartbeat response: a short gap lets an
  // interrupt stop running tools and model calls within about a second.
  maxHeartbeatThrottleInterval: '1 second',
  defaultHeartbeatThrottleInterval: '1 second',
  // A run's workflow task waits this long for the worker that cached it (SDK default 10 s).
  stickyQueueScheduleToStartTimeout: 3000,
} as const;

/**
 * durable-agent as a Temporal plugin. Pass it to `Worker.create({ plugins })` and the worker runs
 * the agent's activities (names prefixed `durableAgent.`) with your tools, on your task queue, with
 * the heartbeat, sticky-routing and shutdown settings the agent needs; at start it creates the
 * agent's search attributes when missing; when it stops, processes the tools left running are
 * stopped. The worker's workflows are yours: re-export `agentWorkflow` from `durable-agent/workflow`
 * in the module you bundle. Pass it to `new Client({ plugins })` (or a connection) for the codec and
 * the connection defaults.
 */
export class AgentPlugin extends SimplePlugin {
  private readonly deps: ActivityDeps;
  /** Each configured worker's companion, keyed by its registered `callModel` function. */
  private readonly companions = new WeakMap<object, Companion>();
  /** Queues of the activity-only workers this plugin starts (it leaves them unconfigured). */
  private readonly ownQueues = new Set<string>();

  constructor(private readonly agentOptions: AgentPluginOptions = {}) {
    checkOptions(agentOptions);
    const codec = agentOptions.codec === undefined ? codecFromEnv() : agentOptions.codec || undefined;
    const dataConverter: DataConverter | undefined = codec
      ? { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH }
      : undefined;
    super({ name: 'durable-agent', ...(dataConverter ? { dataConverter } : {}) });
    this.deps = activityDeps(agentOptions);
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    if (this.ownQueues.has(options.taskQueue)) return options;
    const configured = withTolerantPayloads(super.configureWorker(options));
    const settings = workerSettings();
    const sticky = this.agentOptions.stickyActivities ?? settings.stickyActivities;
    const stickyQueue = sticky
      ? `${options.taskQueue}@${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`
      : undefined;
    const activities = prefixedActivities(
      createActivities({
        ...this.deps,
        conversations: new ConversationCache(),
        ...(stickyQueue ? { workerQueue: stickyQueue } : {}),
      }),
    );
    const clash = Object.keys(activities).filter((name) => name in (options.activities ?? {}));
    if (clash.length) {
      throw new Error(`AgentPlugin: the worker already registers activities named ${clash.join(', ')}`);
    }
    const graceMs = settings.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    const namespace =
      configured.namespace ??
      (this.agentOptions.connectionFromEnv === false ? undefined : environmentConnection().namespace);
    const deployment =
      options.workerDeploymentOptions === undefined
        ? this.agentOptions.deployment === undefined
          ? deploymentFromEnv()
          : this.agentOptions.deployment || undefined
        : undefined;
    const result: WorkerOptions = {
      ...configured,
      ...(deployment ? { workerDeploymentOptions: workerDeploymentOptions(checkedDeployment(deployment)) } : {}),
      ...(namespace !== undefined ? { namespace } : {}),
      activities: { ...configured.activities, ...activities },
      maxHeartbeatThrottleInterval:
        options.maxHeartbeatThrottleInterval ?? AGENT_WORKER_DEFAULTS.maxHeartbeatThrottleInterval,
      defaultHeartbeatThrottleInterval:
        options.defaultHeartbeatThrottleInterval ?? AGENT_WORKER_DEFAULTS.defaultHeartbeatThrottleInterval,
      stickyQueueScheduleToStartTimeout:
        options.stickyQueueScheduleToStartTimeout ?? AGENT_WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout,
      shutdownGraceTime: options.shutdownGraceTime ?? graceMs,
      ...(options.shutdownForceTime === undefined && options.shutdownGraceTime === undefined
        ? { shutdownForceTime: graceMs + 5000 }
        : {}),
    };
    const key = Object.values(activities)[0];
    if (key) {
      this.companions.set(key, {
        activities,
        ...(stickyQueue ? { stickyQueue } : {}),
        registerSearchAttributes: this.agentOptions.registerSearchAttributes ?? true,
        workerOptions: result,
      });
    }
    if (stickyQueue) this.ownQueues.add(stickyQueue);
    return result;
  }

  override runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    if (this.ownQueues.has(worker.options.taskQueue)) return next(worker);
    const key = [...worker.options.activities.values()].find((fn) => this.companions.has(fn));
    const companion = key ? this.companions.get(key) : undefined;
    if (!companion) return super.runWorker(worker, next);
    return runWithCompanion(worker, companion, () => super.runWorker(worker, next));
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    return withSharedWorkflowModules(singleWorkflowPackage(super.configureBundler(options)));
  }

  override configureClient(options: ClientOptions): ClientOptions {
    const configured = super.configureClient(options);
    if (this.agentOptions.connectionFromEnv === false || configured.namespace !== undefined) return configured;
    return { ...configured, namespace: environmentConnection().namespace };
  }

  override configureConnection(options: ConnectionOptions): ConnectionOptions {
    const configured = super.configureConnection(options);
    return this.agentOptions.connectionFromEnv === false ? configured : withEnvironmentDefaults(configured);
  }

  override configureNativeConnection(options: NativeConnectionOptions): NativeConnectionOptions {
    const configured = super.configureNativeConnection(options);
    return this.agentOptions.connectionFromEnv === false ? configured : withEnvironmentDefaults(configured);
  }
}

/**
 * The worker's payload converter turns a client's payload that no converter can decode into a value
 * the agent's handlers reject or ignore, instead of failing every workflow task of the run
 * (docs/clients.md). A converter of the user's own is kept.
 */
function withTolerantPayloads(options: WorkerOptions): WorkerOptions {
  if (options.dataConverter?.payloadConverterPath !== undefined) return options;
  return { ...options, dataConverter: { ...options.dataConverter, payloadConverterPath: PAYLOAD_CONVERTER_PATH } };
}
