/**
 * A worker's settings from the environment (`DURABLE_AGENT_*`), read at the edge and validated with
 * errors that name the variable and what it accepts, and the defaults they fall back to
 * (docs/configuration.md). `src/worker` re-exports them.
 */
import { CANCEL_WATCH_MS } from '../activities/cancel-watch';
import { parseSwitch } from '../shared/switch';

/** Running activities get this long to finish when a worker shuts down, unless configured otherwise. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/**
 * After the grace period, cancelled activities get this much longer to stop (bash kills its process
 * group within about a second, a model call aborts its request) before the worker gives up on them.
 */
export const SHUTDOWN_FORCE_MARGIN_MS = 5_000;
const MAX_SHUTDOWN_GRACE_MS = 60 * 60_000;
/** See `createAgentWorker`: how long a run's workflow task waits for the worker that cached it. */
export const STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT_MS = 3000;

/** Worker settings read from the environment at the edge, validated with readable errors. */
export interface WorkerSettings {
  /** `DURABLE_AGENT_SHUTDOWN_GRACE` (default 10 s). */
  shutdownGraceMs: number;
  /** `DURABLE_AGENT_MODEL_IDLE_TIMEOUT`: abort a model response that sends no bytes for this long (default 90 s). */
  modelIdleTimeoutMs?: number;
  /** Route runs' calls to the worker holding their conversation; `DURABLE_AGENT_STICKY_ACTIVITIES=0` turns it off. */
  stickyActivities: boolean;
  /** `DURABLE_AGENT_MAX_CACHED_RUNS`: runs kept in the workflow cache (default {@link DEFAULT_MAX_CACHED_RUNS}). */
  maxCachedRuns: number;
  /**
   * `DURABLE_AGENT_WORKFLOW_TASK_SLOTS`: workflow tasks (queries among them) the worker holds at once
   * (default {@link DEFAULT_WORKFLOW_TASK_SLOTS}).
   */
  workflowTaskSlots: number;
  /**
   * `DURABLE_AGENT_CANCEL_WATCH`: how often a running model call asks the server whether its run
   * cancelled it (an unbilled describe), ms; 0 (`off`) leaves it to the heartbeats (default 1 s).
   */
  cancelWatchMs: number;
  /**
   * `DURABLE_AGENT_CPU_TARGET` (`0.8`, `80%`): the machine's CPU use above which the worker takes no
   * more activities (the SDK's resource-based slots); unset, it takes as many as it has slots for.
   */
  cpuTarget?: number;
  /**
   * `DURABLE_AGENT_WORKFLOW_STACK_TRACES=1`: keep the SDK's per-promise stack traces of runs (the Web
   * UI's Stack Trace tab); the worker then bundles its workflows at start. Off by default
   * (src/workflows/sdk/promise-stacks.ts).
   */
  workflowStackTraces: boolean;
}

/**
 * Runs a worker keeps in its workflow cache. The SDK's default follows the heap limit (about
 * 2,300 with a 4 GiB heap), and every cached run cost about 0.7 MiB (0.3 MiB since the run input's
 * schemas are built once per thread), so a worker holding many waiting sessions grew past 900 MiB; with
 * 300, 1,000 waiting sessions hold 384 MiB (docs/benchmarks.md, "Worker cost"). A run evicted from the
 * cache is rebuilt by replay when it next has work.
 */
export const DEFAULT_MAX_CACHED_RUNS = 300;

/**
 * Workflow tasks a worker takes at once (`maxConcurrentWorkflowTaskExecutions`), queries among them:
 * the SDK's 40. One workflow thread runs them in turn, so fewer slots answer queries to idle runs
 * sooner, but an overloaded worker's other tasks then wait on the server's sticky queue, where one
 * waiting longer than the sticky timeout (3 s) times out and is scheduled again. With 200 busy runs
 * on one worker, 10 or 20 slots made runs slower and queries' p95 worse than 40 (docs/benchmarks.md,
 * "Query latency under load").
 */
export const DEFAULT_WORKFLOW_TASK_SLOTS = 40;

export function workerSettings(env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const grace = parseDurationSetting('DURABLE_AGENT_SHUTDOWN_GRACE', env.DURABLE_AGENT_SHUTDOWN_GRACE, {
    min: 0,
    max: MAX_SHUTDOWN_GRACE_MS,
  });
  const idle = parseDurationSetting('DURABLE_AGENT_MODEL_IDLE_TIMEOUT', env.DURABLE_AGENT_MODEL_IDLE_TIMEOUT, {
    min: 1000,
    max: 60 * 60_000,
  });
  const cachedRaw = env.DURABLE_AGENT_MAX_CACHED_RUNS?.trim();
  const cached = cachedRaw ? Number(cachedRaw) : DEFAULT_MAX_CACHED_RUNS;
  if (!Number.isInteger(cached) || cached < 2 || cached > 100_000) {
    throw new Error(`DURABLE_AGENT_MAX_CACHED_RUNS must be a whole number from 2 to 100000, got '${cachedRaw}'`);
  }
  const slotsRaw = env.DURABLE_AGENT_WORKFLOW_TASK_SLOTS?.trim();
  const slots = slotsRaw ? Number(slotsRaw) : DEFAULT_WORKFLOW_TASK_SLOTS;
  if (!Number.isInteger(slots) || slots < 2 || slots > 1000) {
    throw new Error(`DURABLE_AGENT_WORKFLOW_TASK_SLOTS must be a whole number from 2 to 1000, got '${slotsRaw}'`);
  }
  const watchRaw = env.DURABLE_AGENT_CANCEL_WATCH?.trim();
  const watch = /^(0|off|false|no)$/i.test(watchRaw ?? '')
    ? 0
    : parseDurationSetting('DURABLE_AGENT_CANCEL_WATCH', watchRaw, { min: 100, max: 60_000 });
  const cpuRaw = env.DURABLE_AGENT_CPU_TARGET?.trim();
  const cpu = cpuRaw ? (/%$/.test(cpuRaw) ? Number(cpuRaw.slice(0, -1)) / 100 : Number(cpuRaw)) : undefined;
  if (cpu !== undefined && !(cpu >= 0.1 && cpu <= 1)) {
    throw new Error(
      `DURABLE_AGENT_CPU_TARGET must be a share of the machine's CPU from 0.1 to 1 (or 10% to 100%), got '${cpuRaw}'`,
    );
  }
  return {
    maxCachedRuns: cached,
    ...(cpu !== undefined ? { cpuTarget: cpu } : {}),
    cancelWatchMs: watch ?? CANCEL_WATCH_MS,
    workflowTaskSlots: slots,
    shutdownGraceMs: grace ?? DEFAULT_SHUTDOWN_GRACE_MS,
    workflowStackTraces: parseSwitch('DURABLE_AGENT_WORKFLOW_STACK_TRACES', env.DURABLE_AGENT_WORKFLOW_STACK_TRACES),
    stickyActivities: !/^(0|false|no|off)$/i.test(env.DURABLE_AGENT_STICKY_ACTIVITIES?.trim() ?? ''),
    ...(idle !== undefined ? { modelIdleTimeoutMs: idle } : {}),
  };
}

export { parseSwitch };

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `30s`, `500ms`, `2m`, `1h`, or a plain number of seconds (`30`, `2.5`). Undefined or empty means
 * unset. Anything else, or a value outside `[min, max]` ms, throws an error that names the variable.
 */
export function parseDurationSetting(
  name: string,
  raw: string | undefined,
  bounds: { min: number; max: number },
): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/.exec(raw.trim());
  const ms = match ? Number(match[1]) * (DURATION_UNITS[match[2] ?? 's'] ?? 1000) : NaN;
  if (!Number.isFinite(ms)) {
    throw new Error(`${name} must be a duration such as 30s, 500ms or 2m (a plain number means seconds), got '${raw}'`);
  }
  if (ms < bounds.min || ms > bounds.max) {
    throw new Error(`${name} must be between ${formatMs(bounds.min)} and ${formatMs(bounds.max)}, got '${raw}'`);
  }
  return Math.round(ms);
}

export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`;
}
