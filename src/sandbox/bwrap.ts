import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';
import { SANDBOX_SHM_BYTES, SANDBOX_TMP_BYTES } from './limits';

/**
 * Bubblewrap (`bwrap`): finding it, checking that it can build a sandbox on this machine, and the
 * arguments that build the one a bash call runs in. What the sandbox allows is documented in
 * docs/sandbox.md; keep the two in step.
 */

/** Where bwrap is looked for, in order, besides the directories of the worker's PATH. */
const BWRAP_CANDIDATES = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];

export { SANDBOX_SHM_BYTES, SANDBOX_TMP_BYTES } from './limits';

/** PATH inside the sandbox: the system's own directories (the only ones mounted). */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** HOME inside the sandbox: the private /tmp, so tools that write caches there can. */
export const SANDBOX_HOME = '/tmp';

/** Top-level system directories that a merged-/usr system has as symlinks and older ones as folders. */
const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The parts of /etc a shell and common tools need, read-only: users and groups (names for `ls -l`,
 * no password hashes: those are in shadow), name resolution, the dynamic linker's cache, time zone,
 * Debian's alternatives (many /usr/bin commands link through them), CA certificates (TLS when the
 * run allows network), git's system config. Everything else in /etc stays out: shadow files, ssh
 * host keys, sudoers, /etc/environment, npmrc and pip.conf (which may hold registry tokens),
 * ssl/private. Each entry costs a mount per call (about 0.2 ms): keep the list short.
 */
export const ETC_ALLOWLIST = [
  'passwd',
  'group',
  'nsswitch.conf',
  'hosts',
  'host.conf',
  'gai.conf',
  'resolv.conf',
  'services',
  'protocols',
  'ld.so.cache',
  'localtime',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
  'gitconfig',
  'os-release',
];

/** The allowlisted /etc entries this machine has, looked up once (missing ones cost nothing then). */
let etcPresent: string[] | undefined;
function presentEtcEntries(): string[] {
  etcPresent ??= ETC_ALLOWLIST.map((name) => `/etc/${name}`).filter((p) => existsSync(p));
  return etcPresent;
}

/**
 * /proc files the sandbox's own /proc would still show of the host: the names of the keys the
 * worker's user may view (`/proc/keys`) and the key counts per user. Covered with /dev/null (which
 * /proc, mounted `nodev`, cannot open: reading them is refused). Only those this kernel has.
 */
const MASKED_PROC_FILES = ['/proc/keys', '/proc/key-users'];
let procMasks: string[] | undefined;
function maskedProcFiles(): string[] {
  procMasks ??= MASKED_PROC_FILES.filter((p) => existsSync(p));
  return procMasks;
}

/** Where this worker's bwrap is, or undefined when there is none. */
export function findBwrap(envPath = process.env.PATH ?? ''): string | undefined {
  const dirs = envPath.split(':').filter((d) => path.isAbsolute(d));
  for (const candidate of [...BWRAP_CANDIDATES, ...dirs.map((d) => path.join(d, 'bwrap'))]) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not there; try the next.
    }
  }
  return undefined;
}

export interface SandboxSpec {
  /** The workspace's real path: bound writable at the same path, and the working directory. */
  workspace: string;
  /**
   * A descriptor of bubblewrap's open on the workspace directory: mounted with `--bind-fd`, which
   * mounts that very directory (and checks it did), whatever the path names meanwhile. Without
   * it the path is bound (the probe's `/tmp`).
   */
  workspaceFd?: number;
  /** Share the host's network (the run's `network: true`); otherwise only a private loopback. */
  network: boolean;
  /**
   * The `size=` of the private /tmp and /dev/shm (memory that no OOM kill frees): the call's share
   * of the worker's budget. Default: the most one call gets.
   */
  tmpBytes?: number;
  shmBytes?: number;
}

/** The environment a sandboxed command sees, and nothing else. */
export function sandboxEnv(): Record<string, string> {
  return {
    PATH: SANDBOX_PATH,
    HOME: SANDBOX_HOME,
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
  };
}

/**
 * The environment bwrap itself is started with. Its processes stay alive for the whole command and
 * their /proc/<pid>/environ is readable from inside (bwrap's init is the command's parent), so it
 * carries nothing of the worker's.
 */
export function bwrapProcessEnv(): Record<string, string> {
  return { PATH: SANDBOX_PATH, LANG: 'C.UTF-8' };
}

let rootArgs: string[] | undefined;
/** Binds (or symlinks, on a merged-/usr system) of the system directories; looked up once. */
function systemRootArgs(): string[] {
  rootArgs ??= lookUpSystemRoots();
  return rootArgs;
}

function lookUpSystemRoots(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_ROOTS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (stat.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  return args;
}

/**
 * The bwrap arguments (before `--` and the command) for one sandboxed call: its own user, PID,
 * IPC, UTS and cgroup namespaces (and network, unless allowed), no capabilities, no nested user
 * namespaces; the system read-only, a private size-capped /tmp, fresh /proc and read-only /dev (with a
 * size-capped /dev/shm), the workspace
 * writable at its own path; a clean environment; killed with its parent.
 */
export function bwrapArgs(spec: SandboxSpec): string[] {
  if (!path.isAbsolute(spec.workspace) || path.resolve(spec.workspace) === '/') {
    throw new Error(`the sandbox needs an absolute workspace below '/', got '${spec.workspace}'`);
  }
  const env = sandboxEnv();
  return [
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(spec.network ? [] : ['--unshare-net']),
    '--hostname',
    'sandbox',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    ...systemRootArgs(),
    ...presentEtcEntries().flatMap((p) => ['--ro-bind-try', p, p]),
    '--proc',
    '/proc',
    ...maskedProcFiles().flatMap((p) => ['--ro-bind', '/dev/null', p]),
    '--dev',
    '/dev',
    '--size',
    String(spec.shmBytes ?? SANDBOX_SHM_BYTES),
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--size',
    String(spec.tmpBytes ?? SANDBOX_TMP_BYTES),
    '--tmpfs',
    '/tmp',
    // After /tmp and the system: a workspace below either is mounted over it, writable.
    ...(spec.workspaceFd === undefined
      ? ['--bind', spec.workspace, spec.workspace]
      : ['--bind-fd', String(spec.workspaceFd), spec.workspace]),
    // bwrap's root is a tmpfs holding the mount points: read-only, so that what is not mounted
    // (/etc/x, /x, the workspace's parents) cannot be written either, not even privately.
    '--remount-ro',
    '/',
    '--chdir',
    spec.workspace,
    '--clearenv',
    ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
  ];
}

export type BwrapProbe = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Whether bwrap is here and can build this sandbox (user namespaces allowed, which some kernels
 * and containers forbid): runs `true` in a sandbox like a real call's. Takes a few milliseconds.
 */
export function probeBwrap(bwrap = findBwrap()): BwrapProbe {
  if (!bwrap) return { ok: false, reason: 'bubblewrap (bwrap) is not installed' };
  const args = [...bwrapArgs({ workspace: '/tmp', network: false }), '--', '/bin/sh', '-c', 'true'];
  const result = spawnSync(bwrap, args, { env: bwrapProcessEnv(), encoding: 'utf8', timeout: 10_000 });
  if (result.status === 0) return { ok: true, path: bwrap };
  const why = (result.stderr || result.error?.message || `exit code ${result.status}`).trim().split('\n')[0];
  return { ok: false, reason: `${bwrap} cannot create a sandbox here: ${why}` };
}
