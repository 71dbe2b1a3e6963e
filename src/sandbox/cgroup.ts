import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * How the kernel bounds one sandboxed call (a bash command, a workspace hook, a workspace MCP
 * server). Where the worker can create cgroups (root on a cgroup v1 host; root, or a delegated
 * cgroup, on v2), each call runs in a cgroup of its own: `pids` caps its processes, `memory` its
 * memory (tmpfs included; past it the kernel's OOM killer ends the call's largest process), `cpu`
 * its CPU time per period. Without a pids cgroup each call gets RLIMIT_NPROC inside its own user
 * namespace (not applied to root); without a memory cgroup, RLIMIT_DATA per process. See
 * docs/sandbox.md.
 */

export type ProcessLimitKind = 'cgroup' | 'rlimit' | 'none';
export type Controller = 'pids' | 'memory' | 'cpu';

/** One of the worker's own cgroups, holding one child per running call, and what it controls. */
export interface WorkerCgroup {
  dir: string;
  v2: boolean;
  controllers: Controller[];
}

export interface ProcessLimitMechanism {
  kind: ProcessLimitKind;
  /** The worker's own pids cgroup, holding one child per running call (`cgroup`). */
  dir?: string;
  /** Every worker cgroup (pids, memory, cpu; one on v2, one per hierarchy on v1). */
  groups?: WorkerCgroup[];
  /** Why processes are not limited (`none`). */
  reason?: string;
}

const WORKER_PREFIX = 'durable-agent-';
const CONTROLLERS: Controller[] = ['pids', 'memory', 'cpu'];
const CPU_PERIOD_US = 100_000;

interface Hierarchy {
  /** Where the hierarchy is mounted. */
  mount: string;
  /** This process's cgroup in it. */
  own: string;
  v2: boolean;
  /** The controllers of ours it serves (v1), or may serve (v2). */
  controllers: Controller[];
}

/** The hierarchies this process is in that serve our controllers, from /proc/self/cgroup and mountinfo. */
function hierarchies(): Hierarchy[] {
  let membership: string;
  let mountinfo: string;
  try {
    membership = readFileSync('/proc/self/cgroup', 'utf8');
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const mounts = mountinfo.split('\n').map((line) => {
    const [left = '', right = ''] = line.split(' - ');
    return { point: left.split(' ')[4] ?? '', type: right.split(' ')[0] ?? '', options: right.split(' ')[2] ?? '' };
  });
  const found: Hierarchy[] = [];
  for (const line of membership.split('\n')) {
    const [, , listed = '', own = ''] = /^(\d+):([^:]*):(.*)$/.exec(line) ?? [];
    if (!own) continue;
    if (listed === '') {
      const mount = mounts.find((m) => m.type === 'cgroup2');
      if (mount) found.push({ mount: mount.point, own, v2: true, controllers: CONTROLLERS });
      continue;
    }
    const controllers = CONTROLLERS.filter((c) => listed.split(',').includes(c));
    const mount = mounts.find((m) => m.type === 'cgroup' && controllers.some((c) => m.options.split(',').includes(c)));
    if (mount && controllers.length) found.push({ mount: mount.point, own, v2: false, controllers });
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the cgroups of workers that are gone (their calls are empty: a call ends with its processes). */
function sweepStale(parent: string): void {
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of entries) {
    const pid = Number(name.slice(WORKER_PREFIX.length));
    if (!name.startsWith(WORKER_PREFIX) || !Number.isInteger(pid) || alive(pid)) continue;
    removeTree(path.join(parent, name));
  }
}

function removeTree(dir: string): void {
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) removeTree(path.join(dir, entry.name));
    }
    rmdirSync(dir);
  } catch {
    // Still busy or already gone: the next sweep tries again.
  }
}

/** Writes each limit its controllers have into a call's cgroup `dir`. */
function writeLimits(dir: string, group: WorkerCgroup, limits: CgroupLimits): void {
  const put = (file: string, value: string) => writeFileSync(path.join(dir, file), value);
  if (group.controllers.includes('pids')) put('pids.max', String(limits.maxProcesses));
  if (group.controllers.includes('memory') && limits.maxMemoryBytes) {
    const bytes = String(limits.maxMemoryBytes);
    if (group.v2) {
      put('memory.max', bytes);
      if (existsSync(path.join(dir, 'memory.swap.max'))) put('memory.swap.max', '0');
      // The whole call ends at its limit, not a random one of its processes.
      put('memory.oom.group', '1');
    } else {
      put('memory.limit_in_bytes', bytes);
      if (existsSync(path.join(dir, 'memory.memsw.limit_in_bytes'))) put('memory.memsw.limit_in_bytes', bytes);
    }
  }
  if (group.controllers.includes('cpu') && limits.maxCpus) {
    const quota = String(Math.max(1000, Math.round(limits.maxCpus * CPU_PERIOD_US)));
    if (group.v2) put('cpu.max', `${quota} ${CPU_PERIOD_US}`);
    else {
      put('cpu.cfs_period_us', String(CPU_PERIOD_US));
      put('cpu.cfs_quota_us', quota);
    }
  }
}

/** Makes this worker's cgroup under `parent` and checks a call's cgroup can have its limits there. */
function makeWorkerCgroup(parent: string, h: Hierarchy): WorkerCgroup | undefined {
  const dir = path.join(parent, `${WORKER_PREFIX}${process.pid}`);
  try {
    let controllers = h.controllers;
    if (h.v2) {
      const available = readFileSync(path.join(parent, 'cgroup.controllers'), 'utf8').split(/\s+/);
      controllers = controllers.filter((c) => available.includes(c));
      const enabled = readFileSync(path.join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
      for (const c of controllers.filter((c) => !enabled.includes(c))) {
        writeFileSync(path.join(parent, 'cgroup.subtree_control'), `+${c}`);
      }
    }
    if (!controllers.length) return undefined;
    sweepStale(parent);
    if (!existsSync(dir)) mkdirSync(dir);
    if (h.v2) writeFileSync(path.join(dir, 'cgroup.subtree_control'), controllers.map((c) => `+${c}`).join(' '));
    const group: WorkerCgroup = { dir, v2: h.v2, controllers };
    const probe = path.join(dir, 'probe');
    if (!existsSync(probe)) mkdirSync(probe);
    writeLimits(probe, group, { maxProcesses: 8, maxMemoryBytes: 64 * 1024 * 1024, maxCpus: 1 });
    rmdirSync(probe);
    process.once('exit', () => removeTree(dir));
    return group;
  } catch {
    removeTree(dir);
    return undefined;
  }
}

/** Works out, once, how this worker bounds a call: its cgroups, or the rlimits. */
export function detectProcessLimit(): ProcessLimitMechanism {
  const groups: WorkerCgroup[] = [];
  for (const h of hierarchies()) {
    const wanted = h.controllers.filter((c) => !groups.some((g) => g.controllers.includes(c)));
    if (!wanted.length) continue;
    // On v2 a cgroup holding processes cannot hand controllers to children: the hierarchy's root can.
    const own = path.join(h.mount, h.own);
    for (const parent of [...new Set(h.v2 ? [own, h.mount] : [own])]) {
      const group = makeWorkerCgroup(parent, { ...h, controllers: wanted });
      if (group) {
        groups.push(group);
        break;
      }
    }
  }
  const pids = groups.find((g) => g.controllers.includes('pids'));
  if (pids) return { kind: 'cgroup', dir: pids.dir, groups };
  if (process.getuid?.() !== 0) return { kind: 'rlimit', groups };
  return {
    kind: 'none',
    groups,
    reason:
      'the worker runs as root and cannot create a pids cgroup (the kernel does not apply RLIMIT_NPROC to root): ' +
      'processes per call are not limited',
  };
}

let mechanism: ProcessLimitMechanism | undefined;

/** This worker's mechanism, worked out on first use. */
export function processLimitMechanism(): ProcessLimitMechanism {
  mechanism ??= detectProcessLimit();
  return mechanism;
}

/** Whether the worker bounds a call's memory with a cgroup (otherwise RLIMIT_DATA per process). */
export function hasMemoryCgroup(m: ProcessLimitMechanism = processLimitMechanism()): boolean {
  return (m.groups ?? []).some((g) => g.controllers.includes('memory'));
}

export interface CgroupLimits {
  maxProcesses: number;
  maxMemoryBytes?: number;
  maxCpus?: number;
}

let calls = 0;

/** One call's cgroups (one per hierarchy): created before the call starts, removed after it ended. */
export class CallCgroup {
  private constructor(
    private readonly dirs: { dir: string; group: WorkerCgroup }[],
    readonly limits: CgroupLimits,
  ) {}

  /** New cgroups with the call's limits under the worker's; throws when they cannot be made. */
  static create(groups: WorkerCgroup[], limits: CgroupLimits, prefix = 'call'): CallCgroup {
    calls += 1;
    const made: { dir: string; group: WorkerCgroup }[] = [];
    try {
      for (const group of groups) {
        const dir = path.join(group.dir, `${prefix}-${calls}`);
        mkdirSync(dir);
        made.push({ dir, group });
        writeLimits(dir, group, limits);
      }
    } catch (err) {
      for (const { dir } of made) removeTree(dir);
      throw err;
    }
    return new CallCgroup(made, limits);
  }

  private dirOf(controller: Controller): { dir: string; group: WorkerCgroup } | undefined {
    return this.dirs.find((d) => d.group.controllers.includes(controller));
  }

  /** Where the launcher writes its own pid to join the cgroups before starting bubblewrap. */
  get procsFiles(): string[] {
    return this.dirs.map((d) => path.join(d.dir, 'cgroup.procs'));
  }

  /** The pids of the processes in the call now (as the host sees them). */
  members(): number[] {
    const first = this.dirOf('pids') ?? this.dirs[0];
    if (!first) return [];
    try {
      return readFileSync(path.join(first.dir, 'cgroup.procs'), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
    } catch {
      return [];
    }
  }

  /** How many times a fork failed because the call was at its limit. */
  limitHits(): number {
    const pids = this.dirOf('pids');
    if (!pids) return 0;
    return counter(path.join(pids.dir, 'pids.events'), 'max');
  }

  /** How many of the call's processes the kernel killed for its memory limit. */
  memoryKills(): number {
    const memory = this.dirOf('memory');
    if (!memory) return 0;
    const file = memory.group.v2 ? 'memory.events' : 'memory.oom_control';
    return counter(path.join(memory.dir, file), 'oom_kill');
  }

  /** Removes the cgroups once their last process is gone (a killed sandbox takes a moment to empty). */
  async remove(): Promise<void> {
    for (const { dir } of this.dirs) {
      for (let attempt = 0; attempt < 40; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
          await new Promise((r) => setTimeout(r, 25));
        }
      }
    }
    // What is still busy is left for the worker's exit, or the next worker's sweep, to remove.
  }
}

/** A `name value` line's value in a cgroup file (0 when absent). */
function counter(file: string, name: string): number {
  try {
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
