import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * How the kernel caps the processes of one sandboxed call. Where the worker can create cgroups
 * with the pids controller (root on a cgroup v1 host; root, or a delegated cgroup, on v2), each call
 * runs in a cgroup of its own with `pids.max`; otherwise each call gets RLIMIT_NPROC inside its own
 * user namespace, which the kernel counts per namespace and enforces for every user but root
 * (root, uid 0 outside the namespace, is exempt from RLIMIT_NPROC). See docs/sandbox.md.
 */

export type ProcessLimitKind = 'cgroup' | 'rlimit' | 'none';

export interface ProcessLimitMechanism {
  kind: ProcessLimitKind;
  /** The worker's own cgroup, holding one child per running call (`cgroup`). */
  dir?: string;
  /** Why processes are not limited (`none`). */
  reason?: string;
}

const WORKER_PREFIX = 'durable-agent-';

interface Hierarchy {
  /** Where the hierarchy is mounted. */
  mount: string;
  /** This process's cgroup in it. */
  own: string;
  v2: boolean;
}

/** The pids-capable hierarchies this process is in, from /proc/self/cgroup and /proc/self/mountinfo. */
function pidsHierarchies(): Hierarchy[] {
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
    const [, , controllers = '', own = ''] = /^(\d+):([^:]*):(.*)$/.exec(line) ?? [];
    if (!own) continue;
    if (controllers === '') {
      const mount = mounts.find((m) => m.type === 'cgroup2');
      if (mount) found.push({ mount: mount.point, own, v2: true });
    } else if (controllers.split(',').includes('pids')) {
      const mount = mounts.find((m) => m.type === 'cgroup' && m.options.split(',').includes('pids'));
      if (mount) found.push({ mount: mount.point, own, v2: false });
    }
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

/** Makes this worker's cgroup under `parent` and checks a call's cgroup can cap its pids there. */
function makeWorkerCgroup(parent: string, v2: boolean): string | undefined {
  const dir = path.join(parent, `${WORKER_PREFIX}${process.pid}`);
  try {
    if (v2) {
      const enabled = readFileSync(path.join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
      if (!enabled.includes('pids')) writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+pids');
    }
    sweepStale(parent);
    if (!existsSync(dir)) mkdirSync(dir);
    if (v2) writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+pids');
    const probe = path.join(dir, 'probe');
    if (!existsSync(probe)) mkdirSync(probe);
    writeFileSync(path.join(probe, 'pids.max'), '8');
    rmdirSync(probe);
    process.once('exit', () => removeTree(dir));
    return dir;
  } catch {
    removeTree(dir);
    return undefined;
  }
}

/** Works out, once, how this worker caps a call's processes. */
export function detectProcessLimit(): ProcessLimitMechanism {
  for (const h of pidsHierarchies()) {
    const own = path.join(h.mount, h.own);
    // On v2 a cgroup holding processes cannot hand controllers to children: the hierarchy's root can.
    const parents = h.v2 ? [own, h.mount] : [own];
    for (const parent of [...new Set(parents)]) {
      const dir = makeWorkerCgroup(parent, h.v2);
      if (dir) return { kind: 'cgroup', dir };
    }
  }
  if (process.getuid?.() !== 0) return { kind: 'rlimit' };
  return {
    kind: 'none',
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

let calls = 0;

/** One call's cgroup: created before the call starts, removed after it ended. */
export class CallCgroup {
  private constructor(readonly dir: string) {}

  /** A new cgroup capped at `maxProcesses` under the worker's; throws when it cannot be made. */
  static create(workerDir: string, maxProcesses: number): CallCgroup {
    calls += 1;
    const dir = path.join(workerDir, `call-${calls}`);
    mkdirSync(dir);
    try {
      writeFileSync(path.join(dir, 'pids.max'), String(maxProcesses));
    } catch (err) {
      removeTree(dir);
      throw err;
    }
    return new CallCgroup(dir);
  }

  /** Where the launcher writes its own pid to join the cgroup before starting bubblewrap. */
  get procsFile(): string {
    return path.join(this.dir, 'cgroup.procs');
  }

  /** The pids of the processes in the cgroup now (as the host sees them). */
  members(): number[] {
    try {
      return readFileSync(this.procsFile, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map(Number);
    } catch {
      return [];
    }
  }

  /** How many times a fork failed because the call was at its limit. */
  limitHits(): number {
    try {
      return Number(/^max (\d+)$/m.exec(readFileSync(path.join(this.dir, 'pids.events'), 'utf8'))?.[1] ?? 0);
    } catch {
      return 0;
    }
  }

  /** Removes the cgroup once its last process is gone (a killed sandbox takes a moment to empty). */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 40; attempt++) {
      try {
        rmdirSync(this.dir);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    // Left for the worker's exit, or the next worker's sweep, to remove.
  }
}
