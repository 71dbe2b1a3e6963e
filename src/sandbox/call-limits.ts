import { CallCgroup, processLimitMechanism, type ProcessLimitMechanism } from './cgroup';
import { effectiveMaxProcesses, type SandboxLimits, type TmpfsBudget } from './limits';
import type { CallLimits } from './spawn';
import type { ToolContext } from '../tools/types';

/** What a call holds while it runs: its share of the tmpfs budget and, where there is one, its cgroup. */
export interface CallReservation {
  limits: CallLimits;
  /** The call's processes, when its cgroup can list them. */
  members?: () => number[];
  /** True when a fork failed because the call was at its process limit (known with a cgroup only). */
  limitReached(): boolean;
  /** A note for the result when the call ran into a limit, or undefined. */
  limitNote(failed: boolean): string | undefined;
  /** Gives the share back and removes the cgroup; call once the call's processes are gone. */
  release(): Promise<void>;
}

export type Reserved = { ok: true; reservation: CallReservation } | { ok: false; waited: boolean; error: string };

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;

/**
 * Reserves a sandboxed call's resources: waits (until `signal` fires) for its share of the
 * worker's tmpfs budget, then makes its cgroup when the worker caps processes with cgroups.
 */
export async function reserveCall(
  limits: SandboxLimits,
  budget: TmpfsBudget,
  signal: AbortSignal,
  mechanism: ProcessLimitMechanism = processLimitMechanism(),
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
  let cgroup: CallCgroup | undefined;
  if (mechanism.kind === 'cgroup' && mechanism.dir) {
    try {
      cgroup = CallCgroup.create(mechanism.dir, maxProcesses);
    } catch (err) {
      grant.release();
      return { ok: false, waited: false, error: `could not create the call's cgroup: ${(err as Error).message}` };
    }
  }
  const reservation: CallReservation = {
    limits: {
      maxProcesses,
      tmpBytes: grant.tmpBytes,
      shmBytes: grant.shmBytes,
      ...(cgroup ? { cgroupProcs: cgroup.procsFile } : {}),
      rlimit: mechanism.kind === 'rlimit',
    },
    ...(cgroup ? { members: () => (cgroup as CallCgroup).members() } : {}),
    limitReached: () => (cgroup ? cgroup.limitHits() > 0 : false),
    limitNote(failed) {
      const notes: string[] = [];
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
      grant.release();
      // Not awaited: a killed sandbox takes a moment to leave its cgroup, and the answer need not wait.
      void cgroup?.remove();
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
    const reserved = await reserveCall(limits, budget, gate.signal);
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
