import { memoryLimitMessage, reserveCall, type CallReservation } from '../sandbox/call-limits';
import { TmpfsBudget, type SandboxLimits, type TmpfsGrant } from '../sandbox/limits';
import { bwrapProcessEnv } from '../sandbox';
import { sandboxedShellArgs } from '../sandbox/spawn';
import { holdWorkspace } from '../tools/held-workspace';

/**
 * Starting a workspace stdio server in the bash sandbox within a bash call's limits: its processes,
 * memory and CPU bounded by the kernel (cgroups, or RLIMIT_NPROC and RLIMIT_DATA), descriptors the
 * worker inherited closed, a clean environment down to the sandbox's pid 1, and its /tmp and
 * /dev/shm a slice of its workspace's share of the worker's tmpfs budget, held while its connection
 * lives (released when the connection closes). See docs/sandbox.md.
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
  /**
   * The limit the kernel killed the server at (`memory`), or undefined; known after the server
   * died, and after `release`. A server killed at its limit is not started again (see McpPool).
   */
  killedByLimit(): 'memory' | undefined;
  /** The message for the model and the operator when the server was killed at its limit. */
  limitMessage(): string | undefined;
  /** Gives the share back and lets go of the workspace: when the connection closes. */
  release(): Promise<void>;
}

/**
 * The servers of one workspace share one call's share of the worker's tmpfs budget (taken when the
 * first starts, given back when the last ends), each holding a slice of it: twelve servers in one
 * `.mcp.json` hold what one bash call may, not the whole worker's budget, so other runs' calls
 * still start. This many slices: each server's /tmp and /dev/shm is this fraction of the share.
 */
export const SERVER_SLICES = 16;

interface WorkspaceShare {
  budget: TmpfsBudget;
  grant: TmpfsGrant;
  servers: number;
}

/** Per worker budget, per workspace: the share its servers hold now (or are waiting for). */
const shares = new WeakMap<TmpfsBudget, Map<string, Promise<WorkspaceShare | undefined>>>();

async function joinShare(
  budget: TmpfsBudget,
  workspace: string,
  limits: SandboxLimits,
  signal: AbortSignal,
): Promise<{ share: WorkspaceShare; leave: () => void } | undefined> {
  let byWorkspace = shares.get(budget);
  if (!byWorkspace) shares.set(budget, (byWorkspace = new Map()));
  let pending = byWorkspace.get(workspace);
  if (!pending) {
    pending = budget
      .acquire({ tmpBytes: limits.tmpBytes, shmBytes: limits.shmBytes }, signal)
      .then((grant) =>
        grant ? { budget: new TmpfsBudget(grant.tmpBytes + grant.shmBytes), grant, servers: 0 } : undefined,
      );
    byWorkspace.set(workspace, pending);
  }
  const share = await pending;
  if (!share) {
    if (byWorkspace.get(workspace) === pending) byWorkspace.delete(workspace);
    return undefined;
  }
  share.servers += 1;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    share.servers -= 1;
    if (share.servers > 0) return;
    if (byWorkspace.get(workspace) === pending) byWorkspace.delete(workspace);
    share.grant.release();
  };
  return { share, leave };
}

/** One word for bash, quoted so that nothing in it is expanded. */
function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

const mib = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MiB`;

/**
 * Reserves the server's slice of its workspace's share (waiting at most `timeoutMs`, the
 * connection's start timeout) and builds the command that starts it: the sandbox launcher,
 * bubblewrap, then `exec` of the server.
 */
export async function launchSandboxed(
  server: { command: string; args: string[]; env: Record<string, string>; workspace: string },
  sandbox: SandboxedServer,
  budget: TmpfsBudget,
  timeoutMs: number,
): Promise<SandboxedLaunch> {
  const gate = AbortSignal.timeout(timeoutMs);
  const joined = await joinShare(budget, server.workspace, sandbox.limits, gate);
  if (!joined) {
    throw new Error(
      `it could not start within ${timeoutMs} ms: the worker's sandbox memory budget (${mib(budget.totalBytes)} ` +
        'for the /tmp and /dev/shm of all its running calls) stayed in use by other calls',
    );
  }
  const { share, leave } = joined;
  const slice = {
    ...sandbox.limits,
    tmpBytes: Math.floor(share.grant.tmpBytes / SERVER_SLICES),
    shmBytes: Math.floor(share.grant.shmBytes / SERVER_SLICES),
  };
  const reserved = await reserveCall(slice, share.budget, gate);
  if (!reserved.ok) {
    leave();
    throw new Error(
      reserved.waited
        ? `it could not start within ${timeoutMs} ms: the workspace's MCP servers share ${mib(share.budget.totalBytes)} ` +
            `of /tmp and /dev/shm (one call's share of the worker's budget), and ${share.servers - 1} running servers hold it`
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
    leave();
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
    // Both shares go back at once (synchronously): a close racing the server's own end sees them back.
    const given = reservation.release();
    leave();
    await held.close();
    await given;
  };
  const killedByLimit = () => reservation.killedByLimit();
  const limitMessage = () =>
    killedByLimit() === 'memory' ? memoryLimitMessage('The server', reservation.maxMemoryBytes) : undefined;
  return { command: '/bin/bash', args, env: bwrapProcessEnv(), reservation, killedByLimit, limitMessage, release };
}
