import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { bwrapArgs, bwrapProcessEnv } from './bwrap';
import type { SandboxStatus } from './mode';

/**
 * Worker variables an unsandboxed shell does not get (with the sandbox it gets none at all). Not a
 * boundary: unsandboxed, `/proc/$PPID/environ` still shows the worker's whole environment.
 */
const HIDDEN_PREFIXES = ['ANTHROPIC_', 'OPENAI_', 'TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'DURABLE_AGENT_CODEC_KEYS'];

export interface ShellSpawn {
  child: ChildProcessByStdio<null, Readable, Readable>;
  sandboxed: boolean;
}

/**
 * Starts `bash -c command` in the workspace, in its own process group, with stdin empty: inside
 * bubblewrap when the status says so, otherwise directly (`off`). `unavailable` never gets here.
 */
export function spawnShell(
  command: string,
  options: { workspace: string; network: boolean; sandbox: SandboxStatus },
): ShellSpawn {
  if (options.sandbox.mode === 'bwrap' && options.sandbox.bwrap) {
    const args = [
      ...bwrapArgs({ workspace: options.workspace, network: options.network }),
      '--',
      '/bin/bash',
      '-c',
      command,
    ];
    const child = spawn(options.sandbox.bwrap, args, {
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
