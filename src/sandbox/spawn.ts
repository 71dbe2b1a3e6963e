import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { bwrapArgs, bwrapProcessEnv } from './bwrap';
import type { SandboxStatus } from './mode';
import type { Spare } from './spares';

/**
 * Worker variables an unsandboxed shell does not get (with the sandbox it gets none at all). Not a
 * boundary: unsandboxed, `/proc/$PPID/environ` still shows the worker's whole environment.
 */
const HIDDEN_PREFIXES = ['ANTHROPIC_', 'OPENAI_', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'DURABLE_AGENT_CODEC_KEYS'];

/**
 * Runs on the host, between the worker and bubblewrap: joins the call's cgroups when there are
 * (the count `$1`, then that many `cgroup.procs` files; before bubblewrap starts, so all it starts
 * is counted), closes every descriptor but stdin, stdout, stderr and the workspace (one the worker
 * inherited without close-on-exec would otherwise reach the sandbox, and stay open in bubblewrap's
 * init for the command to reopen through /proc/1/fd), then runs {@link LAUNCH}.
 */
const JOIN_AND_CLOSE =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ' +
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ] && [ "$n" != 3 ]; then exec {n}>&-; fi; done; ';
/**
 * Reopens the workspace the worker holds (`$1`, a `/proc/…/fd/…` path: the kernel follows the
 * descriptor, not a path) on descriptor 3 for `--bind-fd 3` (bubblewrap closes it once mounted),
 * sets RLIMIT_DATA when `$2` is not empty (the memory bound where there is no memory cgroup), then
 * becomes bubblewrap (`exec`: same pid and process group) with an EMPTY environment (`-c`):
 * bubblewrap's init is the sandbox's pid 1, whose /proc/1/environ the command can read.
 */
const LAUNCH =
  'exec {w}<"$1" || exit 125; exec 3<&"$w" {w}<&- || exit 125; ' +
  'if [ -n "$2" ]; then ulimit -d "$2" || exit 125; fi; shift 2; exec -c "$@"';
const LAUNCHER = JOIN_AND_CLOSE + LAUNCH;

/** The launcher's `$0`, as `ps` shows it. */
const LAUNCHER_NAME = 'durable-agent-launcher';

/**
 * A spare launcher: started ahead of a call, already in the call's cgroups (joining one costs a
 * kernel RCU grace period, 5–15 ms on cgroup v1, which a spare pays before it is needed), it
 * reads the rest of its arguments ({@link launchArgs}, NUL-separated) on stdin, then launches as
 * {@link LAUNCHER} does. Its stdin ends without a word when the worker goes: it then exits.
 */
export const SPARE_LAUNCHER =
  JOIN_AND_CLOSE +
  'a=(); while IFS= read -r -d "" w; do a+=("$w"); done; [ ${#a[@]} -gt 0 ] || exit 0; ' +
  'exec 0</dev/null; set -- "${a[@]}"; ' +
  LAUNCH;

/** The arguments of `/bin/bash` for a spare launcher joining `cgroupProcs`. */
export function spareLauncherArgs(cgroupProcs: string[]): string[] {
  return ['--norc', '-c', SPARE_LAUNCHER, LAUNCHER_NAME, String(cgroupProcs.length), ...cgroupProcs];
}

/** The descriptor the launcher hands bubblewrap the workspace on. */
const WORKSPACE_FD = 3;

/**
 * Runs inside the sandbox: caps the processes (and threads) of the call's user namespace, soft and
 * hard limit both, so the command cannot raise it; then becomes the command's shell.
 */
const LIMITER = 'ulimit -u "$1" || exit 125; exec /bin/bash -c "$2"';

/** What one sandboxed call may hold; see limits.ts. */
export interface CallLimits {
  maxProcesses: number;
  tmpBytes: number;
  shmBytes: number;
  /** The call's cgroup.procs files (pids, memory, cpu), when it has cgroups. */
  cgroupProcs?: string[];
  /** Cap them with RLIMIT_NPROC inside the sandbox (where there is no cgroup and the user is not root). */
  rlimit?: boolean;
  /** RLIMIT_DATA of each process, where the call's memory has no cgroup. */
  dataBytes?: number;
}

export interface ShellSpawn {
  child: ChildProcessByStdio<null, Readable, Readable>;
  sandboxed: boolean;
}

/** Where a child that got the held workspace as its descriptor 3 (see {@link spawnShell}) reopens it. */
export const INHERITED_WORKSPACE = `/proc/self/fd/${WORKSPACE_FD}`;

/** Where and how one sandboxed call runs (see {@link sandboxedShellArgs}). */
export interface LaunchOptions {
  workspace: string;
  workspaceSource: string;
  network: boolean;
  limits: CallLimits;
  setenv?: Record<string, string>;
}

/**
 * The arguments of `/bin/bash` (the launcher) that run `command` in bubblewrap at `bwrap` within
 * the call's limits, with {@link bwrapProcessEnv} as its environment. `workspace` is the verified
 * real path, where the sandbox mounts the workspace and starts; `workspaceSource` is where the
 * launcher reopens the directory the worker verified and holds open (see held-workspace.ts): that
 * directory is what gets mounted, whatever the path names by then. `setenv` adds variables to the
 * sandbox's clean environment (a hook's project directory).
 */
export function sandboxedShellArgs(command: string, bwrap: string, options: LaunchOptions): string[] {
  const procs = options.limits.cgroupProcs ?? [];
  return [
    // No ~/.bashrc on the host: bash reads it for `-c` when its stdin is a socket (as a hook's is).
    '--norc',
    '-c',
    LAUNCHER,
    LAUNCHER_NAME,
    String(procs.length),
    ...procs,
    ...launchArgs(command, bwrap, options),
  ];
}

/** What {@link LAUNCH} takes: the workspace to reopen, RLIMIT_DATA, bubblewrap and its arguments, the command. */
export function launchArgs(command: string, bwrap: string, options: LaunchOptions): string[] {
  const { limits } = options;
  const spec = { workspace: options.workspace, workspaceFd: WORKSPACE_FD, network: options.network, ...limits };
  return [
    options.workspaceSource,
    limits.dataBytes ? String(Math.ceil(limits.dataBytes / 1024)) : '',
    bwrap,
    ...bwrapArgs(spec),
    ...Object.entries(options.setenv ?? {}).flatMap(([name, value]) => ['--setenv', name, value]),
    '--',
    '/bin/bash',
    '-c',
    // One shell fewer where RLIMIT_NPROC would do nothing: a cgroup caps the call, or root is exempt.
    ...(limits.rlimit ? [LIMITER, 'durable-agent-sandbox', String(limits.maxProcesses)] : []),
    command,
  ];
}

/**
 * Starts `bash -c command` in the workspace, in its own process group, with stdin empty: inside
 * bubblewrap when the status says so, mounting the directory open on `workspaceFd` (the verified
 * workspace, passed down as descriptor 3), otherwise directly (`off`). `unavailable` never gets here.
 */
export function spawnShell(
  command: string,
  options: {
    workspace: string;
    workspaceFd?: number;
    /** Where a spare reopens the held workspace (`/proc/<worker>/fd/<fd>`). */
    workspaceSource?: string;
    network: boolean;
    sandbox: SandboxStatus;
    limits: CallLimits;
    /** A spare launcher already in the call's cgroups: handed the launch on its stdin. */
    spare?: Spare;
  },
): ShellSpawn {
  if (options.sandbox.mode === 'bwrap' && options.sandbox.bwrap) {
    if (options.spare && options.workspaceSource) {
      const { child } = options.spare;
      const words = launchArgs(command, options.sandbox.bwrap, {
        ...options,
        workspaceSource: options.workspaceSource,
      });
      child.stdin.end(words.map((w) => `${w}\0`).join(''));
      return { child: child as unknown as ChildProcessByStdio<null, Readable, Readable>, sandboxed: true };
    }
    if (options.workspaceFd === undefined) throw new Error('a sandboxed call needs the workspace held open');
    const args = sandboxedShellArgs(command, options.sandbox.bwrap, {
      ...options,
      workspaceSource: INHERITED_WORKSPACE,
    });
    // Started from `/`: the workspace is reached through the descriptor only, never by its path.
    const child = spawn('/bin/bash', args, {
      cwd: '/',
      env: bwrapProcessEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', options.workspaceFd],
    }) as ChildProcessByStdio<null, Readable, Readable>;
    return { child, sandboxed: true };
  }
  const env: NodeJS.ProcessEnv = { ...process.env, PAGER: 'cat', GIT_PAGER: 'cat' };
  for (const name of Object.keys(env)) if (HIDDEN_PREFIXES.some((p) => name.startsWith(p))) delete env[name];
  const child = spawn('bash', ['-c', command], {
    cwd: options.workspace,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, sandboxed: false };
}
