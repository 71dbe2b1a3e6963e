import { spawn } from 'node:child_process';
import { bwrapProcessEnv, KILL_GRACE_MS, processRegistry, sandboxEnv, type SandboxStatus } from '../sandbox';
import { reserveCall, type CallReservation } from '../sandbox/call-limits';
import { limitsFromEnv, workerTmpfsBudget, type SandboxLimits, type TmpfsBudget } from '../sandbox/limits';
import { sandboxedShellArgs } from '../sandbox/spawn';
import { holdWorkspace, type HeldWorkspace } from '../tools/held-workspace';

/**
 * Runs one command hook: `bash --norc --noprofile -c command` in the workspace, the event as JSON on stdin, in its own
 * process group tracked by the worker's process registry (so a timeout, a cancel or the worker's
 * shutdown kills it and all it started). Output is bounded: a hook printing more than
 * {@link MAX_HOOK_OUTPUT_BYTES} on a stream is killed and counts as failed, so no hook can fill the
 * worker's memory or keep it busy copying gigabytes. A sandboxed hook runs within a bash call's
 * limits (docs/sandbox.md): its processes capped by the kernel, descriptors closed, and its /tmp and
 * /dev/shm a share of the worker's tmpfs budget, held until it ends.
 */

/** Bytes a hook may print on stdout or stderr before it is killed as failed. */
export const MAX_HOOK_OUTPUT_BYTES = 1024 * 1024;
/** After the shell exits, how long background children holding its pipes are waited for. */
const PIPE_DRAIN_GRACE_MS = 1_000;

/**
 * The only worker variables an unsandboxed hook gets: where it runs and how text is spelt. Anything
 * else the worker has may be a credential (provider keys, `TEMPORAL_GRPC_META_*` headers, codec
 * keys, a cloud token under any name), so the environment is built from this list, not filtered.
 */
const PASSED_VARIABLES = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TMPDIR', 'TZ', 'TERM', 'LANG', 'LANGUAGE'];
const PASSED_PREFIXES = ['LC_'];

export interface CommandSpec {
  command: string;
  /** The event, written to stdin. */
  stdin: string;
  workspace: string;
  timeoutMs: number;
  /**
   * Run inside the bash tool's bubblewrap sandbox (workspace hooks), within the bash call's limits
   * (default: the worker's, from its environment) and a share of `budget` (default: the worker's);
   * otherwise with the worker's rights.
   */
  sandbox?: { status: SandboxStatus; network: boolean; limits?: SandboxLimits; budget?: TmpfsBudget };
  signal: AbortSignal;
}

export interface CommandOutcome {
  /** Exit code; null when killed by a signal or never started. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not finish on its own, when it did not. */
  failure?: string;
}

/** The environment of an unsandboxed hook: a clean one (see PASSED_VARIABLES) and where the project is. */
export function hookEnv(workspace: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (PASSED_VARIABLES.includes(name) || PASSED_PREFIXES.some((p) => name.startsWith(p))) env[name] = value;
  }
  return { ...env, ...projectVars(workspace) };
}

/** Where the project is, under durable-agent's name and Claude Code's (so existing hook scripts work). */
function projectVars(workspace: string): Record<string, string> {
  return { DURABLE_AGENT_PROJECT_DIR: workspace, CLAUDE_PROJECT_DIR: workspace };
}

/** An unsandboxed hook's shell: no startup file is read (the sandboxed shell reads none either). */
const UNSANDBOXED_SHELL_ARGS = (command: string) => ['--norc', '--noprofile', '-c', command];

function spawnHook(spec: CommandSpec, reservation: CallReservation | undefined, held: HeldWorkspace | undefined) {
  const options = { cwd: spec.workspace, detached: true, stdio: ['pipe', 'pipe', 'pipe'] as ['pipe', 'pipe', 'pipe'] };
  if (reservation && held && spec.sandbox?.status.bwrap) {
    // The sandbox mounts the directory the worker verified and holds open (see held-workspace.ts).
    const args = sandboxedShellArgs(spec.command, spec.sandbox.status.bwrap, {
      workspace: held.path,
      workspaceSource: held.source,
      network: spec.sandbox.network,
      limits: reservation.limits,
      setenv: projectVars(held.path),
    });
    return { child: spawn('/bin/bash', args, { ...options, cwd: '/', env: bwrapProcessEnv() }), sandboxed: true };
  }
  const env = spec.sandbox ? { ...hookEnv(spec.workspace), ...sandboxEnvOverrides() } : hookEnv(spec.workspace);
  // Its stdin is a socket pair, which bash takes for a remote shell and so sources ~/.bashrc:
  // whatever the worker's user exports there would undo the clean environment above.
  return { child: spawn('bash', UNSANDBOXED_SHELL_ARGS(spec.command), { ...options, env }), sandboxed: false };
}

/**
 * A sandboxed hook's share of the sandbox's resources, waited for within its timeout (the wait
 * counts towards it). Undefined for a hook that runs unsandboxed.
 */
async function reserveHook(
  spec: CommandSpec,
): Promise<{ ok: true; reservation?: CallReservation } | { ok: false; failure: string }> {
  const sandbox = spec.sandbox;
  if (sandbox?.status.mode !== 'bwrap' || !sandbox.status.bwrap) return { ok: true };
  let limits: SandboxLimits;
  try {
    limits = sandbox.limits ?? limitsFromEnv();
  } catch (error) {
    return { ok: false, failure: `the sandbox's limits are misconfigured: ${(error as Error).message}` };
  }
  const gate = new AbortController();
  let why = `it timed out after ${spec.timeoutMs / 1000} s`;
  const timer = setTimeout(() => gate.abort(), spec.timeoutMs);
  const onAbort = () => {
    why = 'the run was cancelled';
    gate.abort();
  };
  spec.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const reserved = await reserveCall(limits, sandbox.budget ?? workerTmpfsBudget(), gate.signal);
    if (reserved.ok) return { ok: true, reservation: reserved.reservation };
    return {
      ok: false,
      failure: reserved.waited
        ? `${why} before it started: ${reserved.error}`
        : `the sandbox could not be set up: ${reserved.error}`,
    };
  } finally {
    clearTimeout(timer);
    spec.signal.removeEventListener('abort', onAbort);
  }
}

/** An unsandboxed workspace hook (`DURABLE_AGENT_SANDBOX=off`) gets bash's pager settings too. */
function sandboxEnvOverrides(): Record<string, string> {
  const { PAGER, GIT_PAGER } = sandboxEnv();
  return { PAGER: PAGER ?? 'cat', GIT_PAGER: GIT_PAGER ?? 'cat' };
}

/** Runs the hook to its end, its timeout, its output cap or the signal, whichever comes first. Never throws. */
export async function runCommandHook(spec: CommandSpec): Promise<CommandOutcome> {
  if (spec.signal.aborted) return { code: null, stdout: '', stderr: '', failure: 'the run was cancelled' };
  if (spec.sandbox?.status.mode === 'unavailable') {
    return {
      code: null,
      stdout: '',
      stderr: '',
      failure: `workspace hooks run in the bash sandbox, which is unavailable (${spec.sandbox.status.detail})`,
    };
  }
  const started = Date.now();
  const reserved = await reserveHook(spec);
  if (!reserved.ok) return { code: null, stdout: '', stderr: '', failure: reserved.failure };
  let held: HeldWorkspace | undefined;
  try {
    // Sandboxed, the workspace is held open from its check on, and that directory is what gets mounted.
    if (reserved.reservation) held = await holdWorkspace(spec.workspace);
  } catch (error) {
    await reserved.reservation?.release();
    return { code: null, stdout: '', stderr: '', failure: `its workspace is refused: ${(error as Error).message}` };
  }
  try {
    const left = Math.max(1, spec.timeoutMs - (Date.now() - started));
    return await runSpawned({ ...spec, timeoutMs: left }, spec.timeoutMs, reserved.reservation, held);
  } finally {
    await reserved.reservation?.release();
    await held?.close();
  }
}

async function runSpawned(
  spec: CommandSpec,
  statedTimeoutMs: number,
  reservation: CallReservation | undefined,
  held: HeldWorkspace | undefined,
): Promise<CommandOutcome> {
  const { child, sandboxed } = spawnHook(spec, reservation, held);
  const pid = child.pid;
  if (pid !== undefined) processRegistry.track(pid, sandboxed, reservation?.members);

  let failure: string | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: string) => {
    if (failure !== undefined) return;
    failure = why;
    if (pid === undefined) return;
    processRegistry.terminate(pid);
    killTimer = setTimeout(() => processRegistry.kill(pid), KILL_GRACE_MS);
  };

  const collect = (stream: NodeJS.ReadableStream, name: string) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      const room = MAX_HOOK_OUTPUT_BYTES - bytes;
      if (chunk.length <= room) {
        chunks.push(chunk);
        bytes += chunk.length;
        return;
      }
      if (room > 0) chunks.push(chunk.subarray(0, room));
      bytes = MAX_HOOK_OUTPUT_BYTES;
      stop(`it printed more than ${MAX_HOOK_OUTPUT_BYTES} bytes on ${name} and was killed`);
    });
    return () => Buffer.concat(chunks).toString('utf8');
  };
  const stdout = collect(child.stdout, 'stdout');
  const stderr = collect(child.stderr, 'stderr');
  // A hook that never reads its stdin makes the write fail (EPIPE): that is its right, not an error.
  child.stdin.on('error', () => {});
  child.stdin.end(spec.stdin);

  const timer = setTimeout(() => stop(`it timed out after ${statedTimeoutMs / 1000} s and was killed`), spec.timeoutMs);
  const onAbort = () => stop('the run was cancelled; it was killed');
  spec.signal.addEventListener('abort', onAbort, { once: true });

  let code: number | null = null;
  try {
    code = await new Promise<number | null>((resolve, reject) => {
      let drain: NodeJS.Timeout | undefined;
      child.once('error', reject);
      child.once('exit', (exitCode) => {
        drain = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          resolve(exitCode);
        }, PIPE_DRAIN_GRACE_MS);
      });
      child.once('close', (exitCode: number | null) => {
        if (drain) clearTimeout(drain);
        resolve(exitCode);
      });
    });
  } catch (error) {
    failure ??= `it could not be started: ${(error as Error).message}`;
  } finally {
    clearTimeout(timer);
    spec.signal.removeEventListener('abort', onAbort);
    if (pid !== undefined) {
      if (killTimer) {
        clearTimeout(killTimer);
        processRegistry.kill(pid);
      }
      processRegistry.settle(pid);
    }
  }
  // A failed hook that ran into its process limit says so.
  const note = reservation?.limitReached()
    ? ` (it reached the sandbox's limit of ${reservation.limits.maxProcesses} processes: some forks failed)`
    : '';
  if (failure !== undefined) failure += note;
  return { code, stdout: stdout(), stderr: stderr(), ...(failure !== undefined ? { failure } : {}) };
}
