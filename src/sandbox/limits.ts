import { readFileSync } from 'node:fs';
import * as os from 'node:os';

/**
 * What one worker lets its sandboxed commands hold: processes per call, and memory in the
 * private `/tmp` and `/dev/shm` (tmpfs) across all its calls at once. Memory held by a tmpfs is
 * freed by no OOM kill, only when the call ends, so it is reserved before a call starts (the
 * mounts get a `size=` the kernel enforces) and returned when it ends. See docs/sandbox.md.
 */

export const MAX_PROCESSES_ENV_VAR = 'DURABLE_AGENT_SANDBOX_MAX_PROCESSES';
export const TMPFS_BUDGET_ENV_VAR = 'DURABLE_AGENT_SANDBOX_TMPFS_BUDGET';
export const MAX_MEMORY_ENV_VAR = 'DURABLE_AGENT_SANDBOX_MAX_MEMORY';
export const MAX_CPUS_ENV_VAR = 'DURABLE_AGENT_SANDBOX_MAX_CPUS';

/** Processes (and threads) one sandboxed call may hold at once, its shell and bubblewrap's init included. */
export const DEFAULT_MAX_PROCESSES = 1024;
/** Below this a shell pipeline cannot run at all. */
const MIN_MAX_PROCESSES = 8;
/** A call's private /tmp at most. */
export const SANDBOX_TMP_BYTES = 1024 * 1024 * 1024;
/** A call's /dev/shm at most (bubblewrap's own /dev would be a tmpfs of half the machine's memory). */
export const SANDBOX_SHM_BYTES = 256 * 1024 * 1024;
/** The worker's tmpfs budget by default: 4 GiB, or half the machine's memory if that is less. */
export const DEFAULT_TMPFS_BUDGET_BYTES = Math.min(4 * 1024 ** 3, Math.floor(os.totalmem() / 2));
/**
 * Memory one call (a bash command, a workspace hook, a workspace MCP server) may hold, its /tmp and
 * /dev/shm included: 4 GiB, or half the machine's memory if that is less. Past it the kernel kills
 * the call's largest process (a memory cgroup) or refuses its allocations (RLIMIT_DATA, per process).
 */
export const DEFAULT_MAX_MEMORY_BYTES = Math.min(4 * 1024 ** 3, Math.floor(os.totalmem() / 2));
/** CPUs one call may keep busy (a cpu cgroup's quota): half the machine's, at least one. */
export const DEFAULT_MAX_CPUS = Math.max(1, Math.floor(os.availableParallelism() / 2));
/** A call gets at least this much /tmp + /dev/shm; when the budget has less left, it waits. */
export const MIN_TMPFS_GRANT_BYTES = 16 * 1024 * 1024;
const PAGE = 4096;

export interface SandboxLimits {
  /** Processes and threads per call, enforced by the kernel (a pids cgroup, or RLIMIT_NPROC). */
  maxProcesses: number;
  /** The most /tmp and /dev/shm one call gets. */
  tmpBytes: number;
  shmBytes: number;
  /** Memory per call (a memory cgroup, or RLIMIT_DATA per process where there is none). */
  maxMemoryBytes?: number;
  /** CPUs per call (a cpu cgroup's quota; not limited without one). */
  maxCpus?: number;
}

/** Reads a size: bytes, or a number with K, M or G (binary units), e.g. `512M`, `4G`. */
export function parseSize(raw: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b?|b)?\s*$/i.exec(raw);
  const unit = (match?.[2] ?? 'b').toLowerCase()[0] as 'b' | 'k' | 'm' | 'g';
  const bytes = match ? Math.floor(Number(match[1]) * { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[unit]) : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < MIN_TMPFS_GRANT_BYTES) {
    throw new Error(
      `${name} must be a size of at least ${MIN_TMPFS_GRANT_BYTES / 1024 ** 2}M (bytes, or with K, M or G: 512M, 4G), got '${raw}'`,
    );
  }
  return bytes;
}

/** Reads a process limit: a whole number of at least 8. */
export function parseMaxProcesses(raw: string, name: string): number {
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < MIN_MAX_PROCESSES) {
    throw new Error(`${name} must be a whole number of processes, at least ${MIN_MAX_PROCESSES}, got '${raw}'`);
  }
  return value;
}

/** Reads a CPU count: a positive number, fractions allowed (`0.5`, `2`). */
export function parseCpus(raw: string, name: string): number {
  const value = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(value) || value < 0.01 || value > 4096) {
    throw new Error(`${name} must be a number of CPUs between 0.01 and 4096 (e.g. 0.5, 2), got '${raw}'`);
  }
  return value;
}

/** The worker's limits from its environment; a bad value throws, naming the variable and what it accepts. */
export function limitsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Required<SandboxLimits> & { tmpfsBudgetBytes: number } {
  const processes = env[MAX_PROCESSES_ENV_VAR];
  const budget = env[TMPFS_BUDGET_ENV_VAR];
  const memory = env[MAX_MEMORY_ENV_VAR];
  const cpus = env[MAX_CPUS_ENV_VAR];
  return {
    maxProcesses: processes ? parseMaxProcesses(processes, MAX_PROCESSES_ENV_VAR) : DEFAULT_MAX_PROCESSES,
    tmpBytes: SANDBOX_TMP_BYTES,
    shmBytes: SANDBOX_SHM_BYTES,
    maxMemoryBytes: memory ? parseSize(memory, MAX_MEMORY_ENV_VAR) : DEFAULT_MAX_MEMORY_BYTES,
    maxCpus: cpus ? parseCpus(cpus, MAX_CPUS_ENV_VAR) : DEFAULT_MAX_CPUS,
    tmpfsBudgetBytes: budget ? parseSize(budget, TMPFS_BUDGET_ENV_VAR) : DEFAULT_TMPFS_BUDGET_BYTES,
  };
}

/** One call's share of the budget: the `size=` of its /tmp and /dev/shm. Release it exactly once. */
export interface TmpfsGrant {
  tmpBytes: number;
  shmBytes: number;
  release(): void;
}

interface Waiter {
  want: { tmpBytes: number; shmBytes: number };
  grant: (g: TmpfsGrant) => void;
}

/**
 * The worker's tmpfs memory, shared by its running calls. A call gets its full /tmp and /dev/shm
 * or half of what is left, whichever is less, and at least {@link MIN_TMPFS_GRANT_BYTES}; when
 * less than that is left it waits, first come first served, for a call to end. Half, so that the
 * calls that come next still get something: the budget is divided among the calls running at once,
 * and their sum never passes it.
 */
export class TmpfsBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly totalBytes: number) {}

  /** Bytes reserved by running calls now. */
  get inUse(): number {
    return this.used;
  }

  /**
   * Reserves a call's share, waiting while too little is left. Resolves undefined when `signal`
   * fires first (the call timed out or was cancelled before it could start).
   */
  acquire(want: { tmpBytes: number; shmBytes: number }, signal: AbortSignal): Promise<TmpfsGrant | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (!this.waiting.length) {
      const granted = this.tryGrant(want);
      if (granted) return Promise.resolve(granted);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        want,
        grant: (g) => {
          signal.removeEventListener('abort', onAbort);
          resolve(g);
        },
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        resolve(undefined);
        this.pump();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private tryGrant(want: { tmpBytes: number; shmBytes: number }): TmpfsGrant | undefined {
    const free = this.totalBytes - this.used;
    const full = want.tmpBytes + want.shmBytes;
    if (free < MIN_TMPFS_GRANT_BYTES || full <= 0) return undefined;
    const share = Math.min(full, Math.max(Math.floor(free / 2), MIN_TMPFS_GRANT_BYTES));
    const shmBytes = Math.floor((share * want.shmBytes) / full / PAGE) * PAGE;
    const tmpBytes = Math.floor((share - shmBytes) / PAGE) * PAGE;
    const reserved = tmpBytes + shmBytes;
    this.used += reserved;
    let released = false;
    return {
      tmpBytes,
      shmBytes,
      release: () => {
        if (released) return;
        released = true;
        this.used -= reserved;
        this.pump();
      },
    };
  }

  private pump(): void {
    while (this.waiting.length) {
      const next = this.waiting[0] as Waiter;
      const granted = this.tryGrant(next.want);
      if (!granted) return;
      this.waiting.shift();
      next.grant(granted);
    }
  }
}

let workerBudget: TmpfsBudget | undefined;

/** This worker process's budget, sized from `DURABLE_AGENT_SANDBOX_TMPFS_BUDGET` on first use. */
export function workerTmpfsBudget(): TmpfsBudget {
  workerBudget ??= new TmpfsBudget(limitsFromEnv().tmpfsBudgetBytes);
  return workerBudget;
}

/**
 * The process limit a call can be given: for a user other than root, RLIMIT_NPROC cannot be raised
 * past the user's hard limit (`ulimit -Hu`), so a lower one is used as it is.
 */
export function effectiveMaxProcesses(wanted: number): number {
  if (process.getuid?.() === 0) return wanted;
  try {
    const line = /^Max processes\s+\S+\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    const hard = Number(line?.[1]);
    return Number.isSafeInteger(hard) && hard > 0 ? Math.min(wanted, hard) : wanted;
  } catch {
    return wanted;
  }
}
