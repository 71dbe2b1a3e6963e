import { reserveCall, type CallReservation } from '../sandbox/call-limits';
import type { SandboxLimits, TmpfsBudget } from '../sandbox/limits';
import { bwrapProcessEnv } from '../sandbox';
import { sandboxedShellArgs } from '../sandbox/spawn';
import { holdWorkspace } from '../tools/held-workspace';

/**
 * Starting a workspace stdio server in the bash sandbox within a bash call's limits: its processes
 * capped by the kernel (a pids cgroup, or RLIMIT_NPROC in its user namespace), descriptors the
 * worker inherited closed, and its /tmp and /dev/shm a share of the worker's tmpfs budget that it
 * holds while its connection lives (released when the connection closes). See docs/sandbox.md.
 */

/** How a sandboxed server is confined: plain data, so that it is part of the connection's key. */
export interface SandboxedServer {
  bwrap: string;
  network: boolean;
  limits: SandboxLimits;
}

export interface SandboxedLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  reservation: CallReservation;
  /** Gives the share back and lets go of the workspace: when the connection closes. */
  release(): Promise<void>;
}

/** One word for bash, quoted so that nothing in it is expanded. */
function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Reserves the server's share (waiting at most `timeoutMs`, the connection's start timeout) and
 * builds the command that starts it: the sandbox launcher, bubblewrap, then `exec` of the server.
 */
export async function launchSandboxed(
  server: { command: string; args: string[]; env: Record<string, string>; workspace: string },
  sandbox: SandboxedServer,
  budget: TmpfsBudget,
  timeoutMs: number,
): Promise<SandboxedLaunch> {
  const gate = AbortSignal.timeout(timeoutMs);
  const reserved = await reserveCall(sandbox.limits, budget, gate);
  if (!reserved.ok) {
    throw new Error(
      reserved.waited
        ? `it could not start within ${timeoutMs} ms: ${reserved.error}`
        : `the sandbox could not be set up: ${reserved.error}`,
    );
  }
  const { reservation } = reserved;
  // The workspace is held open from its check on, and that directory is what the sandbox mounts (the
  // launcher reopens it through this process's /proc: the MCP client spawns the server itself).
  let held;
  try {
    held = await holdWorkspace(server.workspace);
  } catch (error) {
    await reservation.release();
    throw error;
  }
  const command = `exec ${[server.command, ...server.args].map(quoted).join(' ')}`;
  const args = sandboxedShellArgs(command, sandbox.bwrap, {
    workspace: held.path,
    workspaceSource: held.source,
    network: sandbox.network,
    limits: reservation.limits,
    setenv: server.env,
  });
  const release = async () => {
    const given = reservation.release();
    await held.close();
    await given;
  };
  return { command: '/bin/bash', args, env: bwrapProcessEnv(), reservation, release };
}
