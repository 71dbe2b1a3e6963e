import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { bwrapProcessEnv } from './bwrap';
import { CallCgroup, type CgroupLimits, type WorkerCgroup } from './cgroup';
import { spareLauncherArgs } from './spawn';

/**
 * Spare launchers for bash calls: a launcher started ahead of the call, in cgroups of its own with
 * the call's limits, waiting on stdin for what to launch. Joining a cgroup costs the joining
 * process a kernel RCU grace period (5–15 ms on cgroup v1, most of the sandbox's cost per call
 * when paid on the call's path); a spare has paid it before the call comes. One spare per set of
 * limits (a worker has one, tests a few); a taken spare is replaced at once, off the call's path.
 * A spare holds an idle bash (a few MB) and cgroups, nothing of the call: the workspace, the
 * command and the tmpfs sizes reach it only when it is taken. See docs/sandbox.md.
 */

export type SpareChild = ChildProcessByStdio<Writable, Readable, Readable>;

/** A started spare: its process and its cgroups, which become the call's. */
export interface Spare {
  child: SpareChild;
  cgroup: CallCgroup;
}

/** Different sets of limits kept ready at once, at most. */
const MAX_KINDS = 4;

interface Slot {
  spare: Spare | undefined;
  groups: WorkerCgroup[];
  limits: CgroupLimits;
}

function setRef(spare: Spare, ref: boolean): void {
  const { child } = spare;
  for (const handle of [child, child.stdin, child.stdout, child.stderr] as unknown as {
    ref(): void;
    unref(): void;
  }[]) {
    if (ref) handle.ref();
    else handle.unref();
  }
}

/** The worker's spares, by limits. */
export class SparePool {
  private readonly slots = new Map<string, Slot>();
  private stopped = false;

  /**
   * A spare already in cgroups with these limits, or undefined (none ready: the caller creates the
   * cgroups and launches as before). Call {@link replenish} once the call has ended.
   */
  take(groups: WorkerCgroup[], limits: CgroupLimits): Spare | undefined {
    if (this.stopped || !groups.length) return undefined;
    const slot = this.slot(groups, limits);
    const spare = slot.spare;
    slot.spare = undefined;
    if (spare && spare.child.exitCode === null && spare.child.signalCode === null) {
      setRef(spare, true);
      return spare;
    }
    return undefined;
  }

  /**
   * Starts a spare for these limits, when there is none, after the call that took one ended: a
   * process joining a cgroup holds up forks on the whole machine for the kernel's grace period, so
   * it is not done while a call is starting its sandbox.
   */
  replenish(groups: WorkerCgroup[], limits: CgroupLimits): void {
    if (this.stopped || !groups.length) return;
    const slot = this.slot(groups, limits);
    setImmediate(() => this.fill(slot));
  }

  private slot(groups: WorkerCgroup[], limits: CgroupLimits): Slot {
    const key = JSON.stringify([groups.map((g) => g.dir), limits]);
    let slot = this.slots.get(key);
    if (!slot) {
      if (this.slots.size >= MAX_KINDS) this.evict();
      slot = { spare: undefined, groups, limits };
      this.slots.set(key, slot);
    }
    return slot;
  }

  /** Ends every spare (the worker stops). */
  stop(): void {
    this.stopped = true;
    for (const slot of this.slots.values()) this.end(slot);
    this.slots.clear();
  }

  private evict(): void {
    const [key, slot] = this.slots.entries().next().value as [string, Slot];
    this.end(slot);
    this.slots.delete(key);
  }

  private end(slot: Slot): void {
    const spare = slot.spare;
    slot.spare = undefined;
    if (!spare) return;
    // Its stdin's end without a word makes it exit; then its cgroups go.
    spare.child.stdin.end();
    spare.child.once('exit', () => void spare.cgroup.remove());
  }

  private fill(slot: Slot): void {
    if (this.stopped || slot.spare || ![...this.slots.values()].includes(slot)) return;
    let cgroup: CallCgroup;
    try {
      cgroup = CallCgroup.create(slot.groups, slot.limits, 'spare');
    } catch {
      return;
    }
    const child = spawn('/bin/bash', spareLauncherArgs(cgroup.procsFiles), {
      cwd: '/',
      env: bwrapProcessEnv(),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    }) as SpareChild;
    const spare: Spare = { child, cgroup };
    child.on('error', () => undefined);
    child.stdin.on('error', () => undefined);
    child.once('exit', () => {
      if (slot.spare !== spare) return;
      slot.spare = undefined;
      void cgroup.remove();
    });
    setRef(spare, false);
    slot.spare = spare;
  }
}

/** This worker process's spares. */
export const sparePool = new SparePool();
process.once('exit', () => sparePool.stop());
