import type { NativeConnection } from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import type { TemporalConfig } from '../client/config';
import { DEBUG_ENV } from '../telemetry/debug-log';
import { shutdownTelemetryFromEnv } from '../telemetry/from-env';
import {
  type AgentWorker,
  createAgentWorker,
  defaultActivityDeps,
  workerSettings,
  type WorkerSettings,
} from '../worker';

/** The environment variable a worker reads for its per-iteration debug lines; `--debug` sets it. */
export { DEBUG_ENV };

/**
 * What a worker the CLI runs is made of: `durable-agent worker` and `run`'s inline worker are both
 * put together by {@link createCliWorker} from these, so they offer the same activities, settings and
 * telemetry, and both end with {@link closeCliWorkers}.
 */
export interface CliWorkerOptions {
  config: TemporalConfig;
  /** Default: from the environment (`DURABLE_AGENT_SHUTDOWN_GRACE`, `DURABLE_AGENT_MODEL_IDLE_TIMEOUT`…). */
  settings?: WorkerSettings;
  /** Activity dependencies; the production wiring by default. */
  deps?: ActivityDeps;
  /** Where runs' workspaces may be (docs/file-safety.md); default: the deps', else the environment's. */
  workspaceRoots?: string[];
  /** The operator's agent definitions (docs/subagents.md#defining-agents). */
  agentsDir?: string;
  workflowBundlePath?: string;
  /** `--debug`: the worker logs each iteration (sets `DURABLE_AGENT_DEBUG=1` for this process's workers). */
  debug?: boolean;
}

/** The settings and activity dependencies of a CLI worker, read once (the worker command restarts with the same). */
export function cliWorkerParts(options: CliWorkerOptions): { settings: WorkerSettings; deps: ActivityDeps } {
  if (options.debug) process.env[DEBUG_ENV] = '1';
  const settings = options.settings ?? workerSettings();
  const base = options.deps ?? defaultActivityDeps(settings);
  const deps = {
    ...base,
    ...(options.workspaceRoots?.length ? { workspaceRoots: options.workspaceRoots } : {}),
    ...(options.agentsDir !== undefined ? { agentsDir: options.agentsDir } : {}),
  };
  return { settings, deps };
}

/**
 * A worker for the CLI's task queue on `connection`, with the telemetry the environment configures
 * (`OTEL_*`: docs/observability.md). Its spans are buffered: {@link closeCliWorkers} sends them.
 */
export function createCliWorker(
  connection: NativeConnection,
  options: CliWorkerOptions,
  parts: { settings: WorkerSettings; deps: ActivityDeps },
): Promise<AgentWorker> {
  return createAgentWorker({
    connection,
    namespace: options.config.namespace,
    taskQueue: options.config.taskQueue,
    deps: parts.deps,
    shutdownGraceTime: parts.settings.shutdownGraceMs,
    ...(options.workflowBundlePath ? { workflowBundlePath: options.workflowBundlePath } : {}),
  });
}

/**
 * The end of a process's CLI workers: sends what the telemetry still buffers (the run's last spans,
 * its metrics) and stops it. Without it a short-lived process (`run`) exits with its whole trace unsent.
 */
export async function closeCliWorkers(): Promise<void> {
  await shutdownTelemetryFromEnv();
}
