import {
  DefaultLogger,
  GracefulShutdownPeriodExpiredError,
  NativeConnection,
  Runtime,
  makeTelemetryFilterString,
  type LogEntry,
} from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import type { TemporalConfig } from '../client/config';
import { isReachable } from '../server/dev-server';
import { workerSettingsPath } from '../hooks';
import { sandboxStatus } from '../sandbox';
import { createMissingRoots, rootsFromEnv, WorkspacePolicy } from '../tools/workspace-roots';
import { operatorFileOptions } from '../safe-fs/operator-files';
import { SHUTDOWN_FORCE_MARGIN_MS, type AgentWorker, connectWorker, formatMs, type WorkerSettings } from '../worker';
import { sdkMetricsFromEnv } from '../telemetry/sdk-metrics';
import { closeCliWorkers, cliWorkerParts, createCliWorker } from './worker-assembly';

export interface WorkerCommandOptions {
  config: TemporalConfig;
  /** Lines for the operator (stdout by default). */
  out?: (line: string) => void;
  /** Activity dependencies; the production wiring by default. */
  deps?: ActivityDeps;
  workflowBundlePath?: string;
  /** Default: from the environment (`DURABLE_AGENT_SHUTDOWN_GRACE`, `DURABLE_AGENT_MODEL_IDLE_TIMEOUT`). */
  settings?: WorkerSettings;
  /** First and longest wait between attempts to connect or to restart a failed worker (ms). */
  retryInitialMs?: number;
  retryMaxMs?: number;
  /** How often the connection to the server is checked, to say when it is lost and when it is back (ms). */
  healthCheckIntervalMs?: number;
  /** Install the SDK runtime with this command's logging (default true; once per process). */
  installRuntime?: boolean;
  /** `--workspace-root DIR` (repeatable): where runs' workspaces may be; see docs/file-safety.md. */
  workspaceRoots?: string[];
  /** `--agents-dir DIR`: the operator's agent definitions (docs/subagents.md#defining-agents). */
  agentsDir?: string;
  /** `--debug`: each iteration's sizes, timings and decisions in the worker's log (`DURABLE_AGENT_DEBUG=1`). */
  debug?: boolean;
}

const DEFAULT_RETRY_INITIAL_MS = 1000;
const DEFAULT_RETRY_MAX_MS = 30_000;
const DEFAULT_HEALTH_CHECK_INTERVAL_MS = 5000;
/** While the server stays away, say so again this often. */
const STILL_AWAY_REMINDER_MS = 60_000;
/** A worker that ran this long before failing starts its restart backoff afresh. */
const HEALTHY_RUN_MS = 60_000;

/**
 * `durable-agent worker`: a long-lived worker that survives the Temporal server going away. It
 * connects with backoff when no server answers yet; while running it says when contact with the
 * server is lost and when it is back (the SDK's pollers retry by themselves and running activities
 * go on); a worker that fails is restarted with backoff. SIGINT/SIGTERM stop polling and give
 * running activities the grace period (`DURABLE_AGENT_SHUTDOWN_GRACE`, default 10 s) to finish
 * before cancelling them; a second signal exits at once. Resolves with the exit code.
 */
export async function runWorkerCommand(options: WorkerCommandOptions): Promise<number> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const parts = cliWorkerParts(options);
  const { settings, deps } = parts;
  if (options.installRuntime !== false) installWorkerRuntime({ debug: options.debug ?? false });
  const { address, namespace, taskQueue } = options.config;
  let policy: WorkspacePolicy;
  // `worker --workspace-root /srv/agents` on a fresh machine: a missing root is made, not refused.
  for (const root of createMissingRoots(deps.workspaceRoots ?? rootsFromEnv() ?? [])) {
    out(`Created the workspace root ${root} (mode 0700).`);
  }
  try {
    // Checked before connecting: a root that is `/` or a system directory is the operator's mistake to fix.
    policy = new WorkspacePolicy({
      ...(deps.workspaceRoots ? { roots: deps.workspaceRoots } : {}),
      defaultRoot: deps.defaultWorkspace ?? process.cwd(),
      settingsFile: deps.settingsFile ?? workerSettingsPath(),
      ...operatorFileOptions(deps),
    });
  } catch (err) {
    out(`error: ${firstLine(err)}`);
    return 2;
  }
  const initialMs = options.retryInitialMs ?? DEFAULT_RETRY_INITIAL_MS;
  const maxMs = options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS;
  const backoff = (attempt: number) => Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  const grace = formatMs(settings.shutdownGraceMs);

  let stopping: { signal: NodeJS.Signals; at: number } | undefined;
  let worker: AgentWorker | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      out(`${signal} again: exiting now without waiting for running activities.`);
      process.exit(130);
    }
    stopping = { signal, at: Date.now() };
    out(
      `${signal}: shutting down. No new tasks are taken; running activities get up to ${grace} to finish ` +
        `(DURABLE_AGENT_SHUTDOWN_GRACE), then they are cancelled and retried elsewhere. Send it again to exit at once.`,
    );
    wake?.();
    if (worker?.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let exitCode = 0;
  let failures = 0;
  try {
    while (!stopping) {
      const connection = await connectWithRetry();
      if (!connection) break;
      let health: { stop(): void } | undefined;
      const startedAt = Date.now();
      try {
        worker = await createCliWorker(connection, options, parts);
        if (stopping) break;
        out(`Worker polling task queue '${taskQueue}' on ${address} (namespace ${namespace}), pid ${process.pid}.`);
        out(sandboxStatus().detail);
        out(`Workspace roots: ${policy.roots.join(', ')} (runs' workspaces must be inside one; --workspace-root).`);
        for (const line of await policy.rootsHoldingOwnFiles()) out(`Note: ${line}.`);
        out(`SIGINT/SIGTERM shut it down gracefully (running activities get up to ${grace}).`);
        health = watchServer(connection, address, out, options.healthCheckIntervalMs);
        await worker.run();
        if (stopping) break;
        throw new Error('the worker stopped polling without being asked to');
      } catch (err) {
        if (stopping) {
          if (err instanceof GracefulShutdownPeriodExpiredError) {
            out(
              `Running activities did not stop within ${grace} + ${formatMs(SHUTDOWN_FORCE_MARGIN_MS)}; ` +
                'exiting anyway (Temporal retries them on another worker after their heartbeat timeout).',
            );
            exitCode = 1;
          } else {
            out(`Worker stopped with an error while shutting down: ${firstLine(err)}`);
            exitCode = 1;
          }
          break;
        }
        failures = Date.now() - startedAt > HEALTHY_RUN_MS ? 1 : failures + 1;
        const delay = backoff(failures);
        out(`Worker failed: ${firstLine(err)}. Restarting it in ${formatMs(delay)} (attempt ${failures}).`);
        await pause(delay);
      } finally {
        health?.stop();
        worker = undefined;
        await connection.close().catch(() => undefined);
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await closeCliWorkers();
  }
  if (stopping) out(`Worker stopped ${formatMs(Date.now() - stopping.at)} after ${stopping.signal}.`);
  return exitCode;

  async function connectWithRetry(): Promise<NativeConnection | undefined> {
    for (let attempt = 1; !stopping; attempt++) {
      try {
        const connection = await connectWorker(options.config);
        if (attempt > 1) out(`Connected to the Temporal server at ${address}.`);
        return connection;
      } catch (err) {
        const delay = backoff(attempt);
        out(
          `No Temporal server answers at ${address} (${firstLine(err)}); retrying in ${formatMs(delay)} ` +
            `(attempt ${attempt}). Check TEMPORAL_ADDRESS or the profile if this goes on.`,
        );
        await pause(delay);
      }
    }
    return undefined;
  }
}

/**
 * Checks on a timer that the server answers and says when contact is lost and when it is back. The
 * SDK's pollers retry on their own (they survive outages of minutes); this only makes the state
 * visible. A TCP connect tells at once when nothing listens; the gRPC health check (which the SDK
 * itself retries for several seconds) covers a server that accepts connections but does not serve.
 */
export function watchServer(
  connection: NativeConnection,
  address: string,
  out: (line: string) => void,
  intervalMs = DEFAULT_HEALTH_CHECK_INTERVAL_MS,
): { stop(): void } {
  let lostAt: number | undefined;
  let remindedAt = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const probe = async (): Promise<string | undefined> => {
    if (!(await isReachable(address, Math.min(intervalMs, 2000)))) return 'nothing accepts connections there';
    try {
      await connection.withDeadline(Date.now() + 5000, () => connection.healthService.check({}));
      return undefined;
    } catch (err) {
      return firstLine(err);
    }
  };
  const check = async () => {
    const problem = await probe();
    if (stopped) return;
    const now = Date.now();
    if (problem === undefined) {
      if (lostAt !== undefined) {
        out(`Temporal server at ${address} is back after ${formatMs(roundSeconds(now - lostAt))}; polling resumes.`);
      }
      lostAt = undefined;
    } else if (lostAt === undefined) {
      lostAt = remindedAt = now;
      out(
        `Lost contact with the Temporal server at ${address} (${problem}). The worker keeps retrying; ` +
          'running activities go on and report their results once it is back.',
      );
    } else if (now - remindedAt >= STILL_AWAY_REMINDER_MS) {
      remindedAt = now;
      out(`Still no Temporal server at ${address} after ${formatMs(roundSeconds(now - lostAt))}; still retrying.`);
    }
    timer = setTimeout(() => void check(), intervalMs);
  };
  timer = setTimeout(() => void check(), intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * The SDK runtime for a long-lived worker: warnings and errors on stderr, the Rust core's included,
 * minus its per-call "retried N times" lines while the server is away (`watchServer` says that once).
 * By default signals are the caller's to handle (the worker command restarts workers within the
 * process). Also for the CLI's inline worker, whose terminal the core's retry lines would flood
 * while the server is away.
 */
export function installWorkerRuntime(
  options: { shutdownSignals?: NodeJS.Signals[]; level?: 'WARN' | 'ERROR'; debug?: boolean } = {},
): void {
  const level = options.level ?? 'WARN';
  // `--debug`: the workflows' and activities' own lines at every level (DURABLE_AGENT_DEBUG's per-iteration lines).
  const own = (entry: LogEntry) => entry.meta?.sdkComponent === 'workflow' || entry.meta?.sdkComponent === 'activity';
  try {
    Runtime.install({
      // The worker command also logs the workflows' own INFO lines (one per finished run, a WARN
      // when the iteration limit ended it); the SDK's INFO chatter stays out.
      logger: new DefaultLogger(options.debug ? 'DEBUG' : level === 'WARN' ? 'INFO' : level, (entry) => {
        if (entry.level === 'TRACE' || entry.level === 'DEBUG' || entry.level === 'INFO') {
          const wanted = options.debug ? own(entry) : entry.level === 'INFO' && entry.meta?.sdkComponent === 'workflow';
          if (!wanted) return;
        }
        // The process's own activity queue polls no workflows by design (sticky activities).
        if (entry.message.startsWith('No workflows registered, not polling for workflow tasks')) return;
        if (!isPollRetryNoise(entry)) process.stderr.write(formatLogEntry(entry));
      }),
      telemetryOptions: {
        logging: { filter: makeTelemetryFilterString({ core: options.level ?? 'WARN' }), forward: {} },
        ...sdkMetricsFromEnv(),
      },
      shutdownSignals: options.shutdownSignals ?? [],
    });
  } catch {
    // Already installed in this process (an embedding program, tests): keep that runtime.
  }
}

/** The core's per-call retry lines while the server is unreachable: one per call per attempt. */
function isPollRetryNoise(entry: LogEntry): boolean {
  return /^gRPC call \w+ retried \d+ times/.test(entry.message) && /Unavailable/.test(safeJson(entry.meta ?? {}));
}

export function formatLogEntry(entry: LogEntry): string {
  const time = new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString();
  const meta = entry.meta && Object.keys(entry.meta).length ? ` ${safeJson(entry.meta)}` : '';
  return `${time} [${entry.level}] ${entry.message}${meta}\n`;
}

/** How deep an error's `cause` chain is followed in a log line. */
const MAX_CAUSE_DEPTH = 5;

/**
 * An error as plain JSON: its enumerable fields are few or none (`message` and `stack` are not
 * enumerable), so `JSON.stringify` alone prints `{}`. Keeps the class name, the message, a
 * Temporal failure's `type`, a system error's `code`, and the cause chain.
 */
export function errorToJson(error: Error, depth = 0): Record<string, unknown> {
  const json: Record<string, unknown> = { name: error.name, message: error.message };
  const extra = error as Error & { type?: unknown; code?: unknown; nonRetryable?: unknown };
  if (typeof extra.type === 'string') json.type = extra.type;
  if (typeof extra.code === 'string' || typeof extra.code === 'number') json.code = extra.code;
  if (typeof extra.nonRetryable === 'boolean') json.nonRetryable = extra.nonRetryable;
  if (error.cause !== undefined) {
    json.cause =
      error.cause instanceof Error
        ? depth < MAX_CAUSE_DEPTH
          ? errorToJson(error.cause, depth + 1)
          : { name: error.cause.name, message: error.cause.message }
        : error.cause;
  }
  return json;
}

export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v instanceof Error ? errorToJson(v) : v,
    );
  } catch {
    return String(value);
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.split('\n')[0] ?? text;
}

function roundSeconds(ms: number): number {
  return Math.max(1000, Math.round(ms / 1000) * 1000);
}
