import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { bwrapArgs, bwrapProcessEnv } from './bwrap';
import type { SandboxStatus } from './mode';

/**
 * Worker variables an unsandboxed shell does not get (with the sandbox it gets none at all). Not a
 * boundary: unsandboxed, `/proc/$PPID/environ` still shows the worker's whole environment.
 */
const HIDDEN_PREFIXES = ['ANTHROPIC_', 'OPENAI_', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'DURABLE_AGENT_CODEC_KEYS'];

/**
 * Runs on the host, between the worker and bubblewrap: closes every descriptor but stdin, stdout
 * and stderr (one the worker inherited without close-on-exec would otherwise reach the sandbox, and
 * stay open in bubblewrap's init for the command to reopen through /proc/1/fd), joins the call's
 * cgroup when there is one (`$0`; before bubblewrap starts, so all it starts is counted), then
 * becomes bubblewrap (`exec`: same pid and process group).
 */
const LAUNCHER =
  'for f in /proc/self/fd/*; do n=${f##*/}; if [ "$n" -gt 2 ]; then exec {n}>&-; fi; done; ' +
  'if [ -n "$0" ]; then echo $$ > "$0" || exit 125; fi; exec "$@"';

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
  /** The call's cgroup.procs, when its processes are capped by a cgroup. */
  cgroupProcs?: string;
  /** Cap them with RLIMIT_NPROC inside the sandbox (where there is no cgroup and the user is not root). */
  rlimit?: boolean;
}

export interface ShellSpawn {
  child: ChildProcessByStdio<null, Readable, Readable>;
  sandboxed: boolean;
}

/**
 * The arguments of `/bin/bash` (the launcher) that run `command` in bubblewrap at `bwrap` within
 * the call's limits. Started from the workspace with {@link bwrapProcessEnv} as its environment.
 * `setenv` adds variables to the sandbox's clean environment (a hook's project directory).
 */
export function sandboxedShellArgs(
  command: string,
  bwrap: string,
  options: { workspace: string; network: boolean; limits: CallLimits; setenv?: Record<string, string> },
): string[] {
  const { limits } = options;
  const spec = { workspace: options.workspace, network: options.network, ...limits };
  return [
    // No ~/.bashrc on the host: bash reads it for `-c` when its stdin is a socket (as a hook's is).
    '--norc',
    '-c',
    LAUNCHER,
    limits.cgroupProcs ?? '',
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
 * bubblewrap when the status says so, otherwise directly (`off`). `unavailable` never gets here.
 */
export function spawnShell(
  command: string,
  options: { workspace: string; network: boolean; sandbox: SandboxStatus; limits: CallLimits },
): ShellSpawn {
  if (options.sandbox.mode === 'bwrap' && options.sandbox.bwrap) {
    const args = sandboxedShellArgs(command, options.sandbox.bwrap, options);
    const child = spawn('/bin/bash', args, {
      cwd: options.workspace,
      env: bwrapProcessEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
