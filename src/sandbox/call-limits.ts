import { CallCgroup, hasMemoryCgroup, processLimitMechanism, type ProcessLimitMechanism } from './cgroup';
import { effectiveMaxProcesses, limitsFromEnv, type SandboxLimits, type TmpfsBudget } from './limits';
import { sparePool, type Spare } from './spares';
import type { CallLimits } from './spawn';
import type { ToolContext } from '../tools/types';

/** What a call holds while it runs: its share of the tmpfs budget and, where there is one, its cgroup. */
export interface CallReservation {
  limits: CallLimits;
  /** The call's processes, when its cgroup can list them. */
  members?: () => number[];
  /** True when a fork failed because the call was at its process limit (known with a cgroup only). */
  limitReached(): boolean;
  /**
   * Which limit the kernel enforced by killing (`memory`: a process of the call was killed at its
   * memory limit; known with a memory cgroup only), or undefined. Still known after `release`.
   */
  killedByLimit(): 'memory' | undefined;
  /** The call's memory limit in bytes. */
  readonly maxMemoryBytes: number;
  /** A spare launcher already in the call's cgroups, for the caller to launch with (bash calls). */
  spare?: Spare;
  /** A note for the result when the call ran into a limit, or undefined. */
  limitNote(failed: boolean): string | undefined;
  /** Gives the share back and removes the cgroup; call once the call's processes are gone. */
  release(): Promise<void>;
}

export type Reserved = { ok: true; reservation: CallReservation } | { ok: false; waited: boolean; error: string };

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;

let defaults: { maxMemoryBytes: number; maxCpus: number } | undefined;
/** Memory and CPUs of a call whose limits do not say (a bad setting is refused at worker start, not here). */
function defaultLimits(): { maxMemoryBytes: number; maxCpus: number } {
  if (!defaults) {
    let fromEnv;
    try {
      fromEnv = limitsFromEnv();
    } catch {
      fromEnv = limitsFromEnv({});
    }
    defaults = { maxMemoryBytes: fromEnv.maxMemoryBytes, maxCpus: fromEnv.maxCpus };
  }
  return defaults;
}

/** The message for a call (or server) the kernel killed at its memory limit. */
export function memoryLimitMessage(what: string, maxMemoryBytes: number): string {
  return (
    `${what} exceeded the sandbox's memory limit of ${mib(maxMemoryBytes)} per call and was killed ` +
    '(out of memory); use less memory (smaller inputs, streaming) or ask the operator to raise ' +
    'DURABLE_AGENT_SANDBOX_MAX_MEMORY.'
  );
}

/**
 * Reserves a sandboxed call's resources: waits (until `signal` fires) for its share of the
 * worker's tmpfs budget, then makes its cgroup when the worker caps processes with cgroups.
 */
export async function reserveCall(
  limits: SandboxLimits,
  budget: TmpfsBudget,
  signal: AbortSignal,
  mechanism: ProcessLimitMechanism = processLimitMechanism(),
  options: { spare?: boolean } = {},
): Promise<Reserved> {
  const grant = await budget.acquire({ tmpBytes: limits.tmpBytes, shmBytes: limits.shmBytes }, signal);
  if (!grant) {
    return {
      ok: false,
      waited: true,
      error:
        `the worker's sandbox memory budget (${mib(budget.totalBytes)} for the /tmp and /dev/shm of all its ` +
        `running calls) stayed in use by other calls`,
    };
  }
  const maxProcesses = effectiveMaxProcesses(limits.maxProcesses);
  const maxMemoryBytes = limits.maxMemoryBytes ?? defaultLimits().maxMemoryBytes;
  const cgroupLimits = { maxProcesses, maxMemoryBytes, maxCpus: limits.maxCpus ?? defaultLimits().maxCpus };
  const groups = mechanism.groups ?? [];
  let cgroup: CallCgroup | undefined;
  const spare = options.spare ? sparePool.take(groups, cgroupLimits) : undefined;
  if (spare) cgroup = spare.cgroup;
  else if (groups.length) {
    try {
      cgroup = CallCgroup.create(groups, cgroupLimits);
    } catch (err) {
      grant.release();
      return { ok: false, waited: false, error: `could not create the call's cgroup: ${(err as Error).message}` };
    }
  }
  // Read before the cgroup goes, so that a connection closing after its server died can still tell.
  let memoryKilled = false;
  const killedByLimit = () => {
    memoryKilled ||= (cgroup?.memoryKills() ?? 0) > 0;
    return memoryKilled ? ('memory' as const) : undefined;
  };
  const reservation: CallReservation = {
    limits: {
      maxProcesses,
      tmpBytes: grant.tmpBytes,
      shmBytes: grant.shmBytes,
      ...(cgroup ? { cgroupProcs: cgroup.procsFiles } : {}),
      rlimit: mechanism.kind === 'rlimit',
      ...(hasMemoryCgroup(mechanism) ? {} : { dataBytes: maxMemoryBytes }),
    },
    maxMemoryBytes,
    ...(spare ? { spare } : {}),
    ...(cgroup ? { members: () => (cgroup as CallCgroup).members() } : {}),
    limitReached: () => (cgroup ? cgroup.limitHits() > 0 : false),
    killedByLimit,
    limitNote(failed) {
      const notes: string[] = [];
      if (killedByLimit() === 'memory') notes.push(memoryLimitMessage('The command', maxMemoryBytes));
      if (reservation.limitReached()) {
        notes.push(
          `The command reached the sandbox's limit of ${maxProcesses} processes per call: some forks failed ` +
            '(Resource temporarily unavailable).',
        );
      }
      if (failed && grant.tmpBytes < limits.tmpBytes) {
        notes.push(
          `This call's /tmp held at most ${mib(grant.tmpBytes)} and /dev/shm ${mib(grant.shmBytes)} (the worker's ` +
            'sandbox memory is shared by its running calls); write large files to the workspace.',
        );
      }
      return notes.length ? notes.join(' ') : undefined;
    },
    async release() {
      killedByLimit();
      // A spare that was never handed its command exits on its stdin's end.
      if (spare && spare.child.stdin.writable) spare.child.stdin.end();
      grant.release();
      // Not awaited: a killed sandbox takes a moment to leave its cgroup, and the answer need not wait.
      void cgroup?.remove();
      if (options.spare) sparePool.replenish(groups, cgroupLimits);
    },
  };
  return { ok: true, reservation };
}

/**
 * Waits for the call's share of the sandbox's resources, within the call's timeout (the wait counts
 * towards it) and heartbeating meanwhile; a cancellation ends the wait.
 */
export async function reserveWithin(
  limits: SandboxLimits,
  budget: TmpfsBudget,
  timeoutMs: number,
  ctx: ToolContext,
  heartbeatIntervalMs: number,
  options: { spare?: boolean } = {},
): Promise<{ ok: true; reservation: CallReservation } | { ok: false; error: string }> {
  const started = Date.now();
  const gate = new AbortController();
  let why = 'timed out';
  const timer = setTimeout(() => gate.abort(), timeoutMs);
  const onAbort = () => {
    why = 'was cancelled';
    gate.abort();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const heartbeat = setInterval(
    () => ctx.heartbeat({ tool: 'bash', elapsedMs: Date.now() - started, outputChars: 0 }),
    heartbeatIntervalMs,
  );
  try {
    const reserved = await reserveCall(limits, budget, gate.signal, processLimitMechanism(), options);
    if (reserved.ok) return reserved;
    const error = reserved.waited
      ? `Command ${why} after ${Date.now() - started} ms before it started: ${reserved.error}. Nothing was run.`
      : `Error: the sandbox could not be set up: ${reserved.error}. Nothing was run.`;
    return { ok: false, error };
  } finally {
    clearTimeout(timer);
    clearInterval(heartbeat);
    ctx.signal.removeEventListener('abort', onAbort);
  }
}
