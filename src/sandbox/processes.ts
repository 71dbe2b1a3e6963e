import { childrenOf, namespaceMembers, pidNamespaceOf, readStat } from './proc';

/** Time between SIGTERM and SIGKILL when commands are stopped, so they can clean up. */
export const KILL_GRACE_MS = 1_000;
const POLL_MS = 25;

interface TrackedGroup {
  /** The spawned process: the group's leader (`detached`), bwrap's outer process when sandboxed. */
  pgid: number;
  sandboxed: boolean;
  /** The leader's start time, so a recycled pid is never signalled in its stead. */
  leaderStart: string | undefined;
  /** Lists the sandbox's processes (its cgroup's), sparing a scan of every process on the host. */
  members?: () => number[];
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: every process in the group has exited already.
  }
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone already.
  }
}

/**
 * Every process group the tools started and that may still hold a live process, so that none
 * outlives its worker: {@link ProcessRegistry.stopAll} on a graceful shutdown (SIGTERM, then
 * SIGKILL after a grace), and a synchronous SIGKILL of all of them when the process exits by any
 * other path (`process.exit` after a second Ctrl-C). A SIGKILLed worker cannot run either: there
 * bubblewrap's `--die-with-parent` kills the sandboxed commands.
 *
 * A sandboxed command lives in its own PID namespace under bubblewrap's init: when the command's
 * shell exits the kernel kills everything left in the namespace, and SIGKILL to the group (bwrap's
 * two processes) does the same at any time. SIGTERM goes to the processes inside, not to bwrap,
 * whose outer process would die of it at once and take the command down without its grace.
 */
export class ProcessRegistry {
  private readonly groups = new Map<number, TrackedGroup>();
  private exitHook: (() => void) | undefined;

  /** Starts tracking the group led by `pid` (spawned with `detached: true`). */
  track(pid: number, sandboxed: boolean, members?: () => number[]): void {
    this.prune();
    this.groups.set(pid, { pgid: pid, sandboxed, leaderStart: readStat(pid)?.startTime, members });
    if (!this.exitHook) {
      this.exitHook = () => this.killAllNow();
      process.on('exit', this.exitHook);
    }
  }

  /**
   * The command returned: forget its group unless something in it still runs (a background
   * process of an unsandboxed command), which is then stopped with the worker.
   */
  settle(pid: number): void {
    const group = this.groups.get(pid);
    // A sandbox's whole PID namespace ended with its shell (bwrap's init is gone).
    if (group && (group.sandboxed || !this.alive(group))) this.groups.delete(pid);
  }

  /** Groups tracked now (those that may still hold a live process). */
  get size(): number {
    this.prune();
    return this.groups.size;
  }

  /** SIGTERM to the processes of one group: the command's shell and everything it started. */
  terminate(pid: number): void {
    const group = this.groups.get(pid);
    if (!group || !this.isOurs(group)) return;
    if (!group.sandboxed) return signalGroup(group.pgid, 'SIGTERM');
    // bwrap's outer process → its init (pid 1 of the namespace) → the command. Signal every process
    // in the namespace but the init (which would not receive it anyway).
    const init = childrenOf(group.pgid)[0];
    if (group.members) {
      const inside = group.members().filter((member) => member !== group.pgid && member !== init);
      if (init === undefined || !inside.length) return signalGroup(group.pgid, 'SIGKILL');
      for (const member of inside) signalPid(member, 'SIGTERM');
      return;
    }
    const namespace = init !== undefined ? pidNamespaceOf(init) : undefined;
    if (init === undefined || namespace === undefined || namespace === pidNamespaceOf(process.pid)) {
      // No namespace to look into (the sandbox is starting or gone): stopping bwrap kills it all.
      return signalGroup(group.pgid, 'SIGKILL');
    }
    const inside = namespaceMembers(namespace).filter((member) => member !== init);
    // Nothing runs in it yet (the sandbox is still being set up): nothing to let clean up.
    if (!inside.length) return signalGroup(group.pgid, 'SIGKILL');
    for (const member of inside) signalPid(member, 'SIGTERM');
  }

  /** SIGKILL to the whole group; for a sandbox, that ends its PID namespace and all in it. */
  kill(pid: number): void {
    const group = this.groups.get(pid);
    if (group && this.isOurs(group)) signalGroup(group.pgid, 'SIGKILL');
  }

  /**
   * Stops every tracked group: SIGTERM, up to `graceMs` for them to exit, then SIGKILL. Resolves
   * once none is left (or, for a process that even SIGKILL does not end at once, shortly after).
   * Returns how many groups were still running.
   */
  async stopAll(graceMs = KILL_GRACE_MS): Promise<number> {
    this.prune();
    const pids = [...this.groups.keys()];
    if (!pids.length) return 0;
    for (const pid of pids) this.terminate(pid);
    await this.waitForNone(pids, graceMs);
    for (const pid of pids) this.kill(pid);
    await this.waitForNone(pids, graceMs);
    for (const pid of pids) this.groups.delete(pid);
    return pids.length;
  }

  /** SIGKILL to every tracked group, synchronously: for `process.on('exit')`. */
  killAllNow(): void {
    for (const pid of this.groups.keys()) this.kill(pid);
  }

  private async waitForNone(pids: number[], ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      const left = pids.filter((pid) => {
        const group = this.groups.get(pid);
        return group !== undefined && this.alive(group);
      });
      if (!left.length || Date.now() >= deadline) return;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /**
   * False when the leader's pid now belongs to another process: a group id is only reused once
   * its old group is empty, by a new process with that pid leading a group of its own.
   */
  private isOurs(group: TrackedGroup): boolean {
    const leader = readStat(group.pgid);
    return !leader || group.leaderStart === undefined || leader.startTime === group.leaderStart;
  }

  /** One syscall, not a /proc scan: it runs after every command. A zombie member counts, harmlessly. */
  private alive(group: TrackedGroup): boolean {
    if (!this.isOurs(group)) return false;
    try {
      process.kill(-group.pgid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  private prune(): void {
    if (!this.groups.size) return;
    for (const [pid, group] of this.groups) if (!this.alive(group)) this.groups.delete(pid);
  }
}

/** The worker process's one registry: the bash tool tracks into it, the worker stops it. */
export const processRegistry = new ProcessRegistry();

/** Stops every process the tools started (SIGTERM, then SIGKILL after `graceMs`). */
export function stopAllToolProcesses(graceMs = KILL_GRACE_MS): Promise<number> {
  return processRegistry.stopAll(graceMs);
}
