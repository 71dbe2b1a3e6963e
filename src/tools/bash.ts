import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { defineTool } from './define-tool';
import type { ToolContext, ToolResult } from './types';
import {
  CommandPolicy,
  detectSandbox,
  KILL_GRACE_MS,
  policyFromEnv,
  processRegistry,
  refusalMessage,
  sandboxStatus,
  spawnShell,
  type PolicyConfig,
  type SandboxSetting,
  type SandboxStatus,
} from '../sandbox';
import { reserveWithin, type CallReservation } from '../sandbox/call-limits';
import { limitsFromEnv, workerTmpfsBudget, type SandboxLimits, type TmpfsBudget } from '../sandbox/limits';
import { OutputCollector } from './output-collector';
import { StreamingSpill } from './spill';
import { holdWorkspace } from './held-workspace';
import { realWorkspace } from '../safe-fs/workspace';
import { cutPrefix } from '../shared/well-formed';

/** Default and maximum time a command may run, in milliseconds. The tool activity allows 11 min. */
export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/**
 * Captured output is cut to this many characters. It stays a little below the registry's cap so the
 * trailing exit-code / timeout lines are never the part that gets cut.
 */
export const BASH_MAX_OUTPUT_CHARS = MAX_TOOL_OUTPUT_CHARS - 1024;
/** How often a running command reports liveness; well inside the tool heartbeat timeout. */
export const BASH_HEARTBEAT_INTERVAL_MS = 5_000;
/**
 * After the shell exits, how long to wait for background children that still hold its output
 * pipes (`server &`) before returning without them.
 */
const PIPE_DRAIN_GRACE_MS = 1_000;

/** Said at the end of every unsandboxed call, so neither the model nor a reader of the run misses it. */
export const UNSANDBOXED_NOTE = '(Ran UNSANDBOXED: DURABLE_AGENT_SANDBOX=off.)';

const bashInput = z.strictObject({
  command: z
    .string()
    .min(1, 'command must be a non-empty shell command')
    .describe('The shell command to run (bash -c).'),
  timeout: z
    .number()
    .int()
    .min(1)
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `Timeout in milliseconds (default ${BASH_DEFAULT_TIMEOUT_MS}, max ${BASH_MAX_TIMEOUT_MS}). ` +
        'When it expires the command and all processes it started are killed.',
    ),
  description: z
    .string()
    .optional()
    .describe('A short description of what the command does (5-10 words), shown to the operator.'),
});

/** Options for {@link createBashTool}; tests shorten the intervals. */
export interface BashToolOptions {
  heartbeatIntervalMs?: number;
  maxOutputChars?: number;
  /** Overrides `DURABLE_AGENT_SANDBOX` for this tool (tests and the benchmark run both modes). */
  sandbox?: SandboxSetting;
  /** The worker's command policy; default: `DURABLE_AGENT_COMMAND_POLICY`. */
  policy?: PolicyConfig;
  /** Per-call limits; default: `DURABLE_AGENT_SANDBOX_MAX_PROCESSES` and the built-in /tmp and /dev/shm sizes. */
  limits?: Partial<SandboxLimits>;
  /** The tmpfs budget shared by calls; default: the worker's (`DURABLE_AGENT_SANDBOX_TMPFS_BUDGET`). */
  tmpfsBudget?: TmpfsBudget;
}

/**
 * What a run may add to the worker's command policy (`commandPolicy` in the run input, when the
 * run carries one): more denied commands. A run cannot turn the worker's rules off.
 */
export interface RunCommandPolicy {
  deny?: string[];
}

/** Reads the run's policy from the context; anything malformed is ignored rather than trusted. */
function runPolicy(ctx: ToolContext): PolicyConfig {
  const raw: unknown = ctx.commandPolicy;
  if (typeof raw !== 'object' || raw === null) return {};
  const deny = (raw as RunCommandPolicy).deny;
  return Array.isArray(deny) ? { deny: deny.filter((d): d is string => typeof d === 'string' && d.trim() !== '') } : {};
}

/**
 * Run a command with `bash -c` in the workspace: in a bubblewrap sandbox by default (see
 * docs/sandbox.md), after the command policy allowed it. The command runs in its own process
 * group, tracked by the worker's process registry, so that a timeout, an interrupt or the worker's
 * shutdown kills everything it started, not just the shell.
 */
export function createBashTool(options: BashToolOptions = {}) {
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? BASH_HEARTBEAT_INTERVAL_MS;
  const maxOutputChars = options.maxOutputChars ?? BASH_MAX_OUTPUT_CHARS;
  // Read at creation, so a bad setting fails the worker's start with a message naming the variable.
  const workerPolicy = options.policy ?? policyFromEnv();
  new CommandPolicy([workerPolicy]);
  const fromEnv = limitsFromEnv();
  const limits: SandboxLimits = { ...fromEnv, ...options.limits };
  const budget = options.tmpfsBudget ?? workerTmpfsBudget();
  let sandbox: SandboxStatus | undefined;
  const status = () =>
    (sandbox ??= options.sandbox ? detectSandbox({ DURABLE_AGENT_SANDBOX: options.sandbox }) : sandboxStatus());

  return defineTool({
    name: 'bash',
    description:
      'Run a shell command with bash in the workspace directory and return its combined stdout and stderr ' +
      'followed by its exit code. Each call starts a fresh shell in the workspace (cd and variables do not ' +
      'persist between calls); stdin is empty, so interactive commands fail. Commands run in a sandbox: only ' +
      'the workspace is writable, /tmp is private to the call and small (memory), there is no network unless the ' +
      `run allows it, at most ${limits.maxProcesses} processes run at once, and processes still running when the ` +
      'command returns are stopped. Commands such as sudo are refused. ' +
      `Output longer than ${maxOutputChars} characters is cut in the middle and saved in full to a file you can read. Commands are killed after the ` +
      `timeout (default ${BASH_DEFAULT_TIMEOUT_MS / 1000} s). Prefer read_file, write_file, edit_file, glob ` +
      'and grep for reading, editing and searching files. Processes left running in the background (&) should ' +
      'redirect their output to a file: output arriving after the command returns is not captured.',
    inputSchema: bashInput,
    sideEffect: 'mutating',
    async execute(input, ctx) {
      if (input.command.includes('\0')) {
        return { content: 'Error: the command contains a NUL byte, which no shell command can hold.', isError: true };
      }
      const refusal = new CommandPolicy([workerPolicy, runPolicy(ctx)]).check(input.command);
      if (refusal) return { content: refusalMessage(refusal), isError: true };
      const sandboxNow = status();
      if (sandboxNow.mode === 'unavailable') return { content: `Error: ${sandboxNow.detail}`, isError: true };
      return runCommand(input.command, input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, ctx, sandboxNow, {
        heartbeatIntervalMs,
        maxOutputChars,
        limits,
        budget,
      });
    },
  });
}

async function runCommand(
  command: string,
  timeoutMs: number,
  ctx: ToolContext,
  sandbox: SandboxStatus,
  options: { heartbeatIntervalMs: number; maxOutputChars: number; limits: SandboxLimits; budget: TmpfsBudget },
): Promise<ToolResult> {
  // Sandboxed, the workspace is held open from its check on, and that directory is what gets mounted.
  const held = sandbox.mode === 'bwrap' ? await holdWorkspace(ctx.workspace) : undefined;
  let reservation: CallReservation | undefined;
  try {
    const cwd = held?.path ?? (await realWorkspace(ctx.workspace));
    if (ctx.signal.aborted) return { content: 'Command was cancelled before it started.', isError: true };
    const started = Date.now();
    if (sandbox.mode === 'bwrap') {
      const reserved = await reserveWithin(
        options.limits,
        options.budget,
        timeoutMs,
        ctx,
        options.heartbeatIntervalMs,
        {
          spare: true,
        },
      );
      if (!reserved.ok) return { content: reserved.error, isError: true };
      reservation = reserved.reservation;
    }
    const left = Math.max(1, timeoutMs - (Date.now() - started));
    return await runSpawned(command, ctx, {
      cwd,
      workspaceFd: held?.fd,
      workspaceSource: held?.source,
      timeoutMs: left,
      statedTimeoutMs: timeoutMs,
      started,
      sandbox,
      reservation,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      maxOutputChars: options.maxOutputChars,
    });
  } finally {
    await reservation?.release();
    await held?.close();
  }
}

interface SpawnedCall {
  cwd: string;
  /** The held workspace's descriptor (sandboxed calls), and where a spare launcher reopens it. */
  workspaceFd: number | undefined;
  workspaceSource: string | undefined;
  /** What is left of the timeout once the call's resources were reserved. */
  timeoutMs: number;
  /** The timeout the call was given, and when it began, for its messages. */
  statedTimeoutMs: number;
  started: number;
  sandbox: SandboxStatus;
  reservation: CallReservation | undefined;
  heartbeatIntervalMs: number;
  maxOutputChars: number;
}

async function runSpawned(command: string, ctx: ToolContext, call: SpawnedCall): Promise<ToolResult> {
  const { cwd, workspaceFd, workspaceSource, timeoutMs, statedTimeoutMs, started, sandbox, reservation, ...options } =
    call;
  const limits = reservation?.limits ?? { maxProcesses: 0, tmpBytes: 0, shmBytes: 0 };
  const network = ctx.network === true;
  const { child } = spawnShell(command, {
    workspace: cwd,
    workspaceFd,
    workspaceSource,
    network,
    sandbox,
    limits,
    ...(reservation?.spare ? { spare: reservation.spare } : {}),
  });
  const pid = child.pid;
  if (pid !== undefined) processRegistry.track(pid, sandbox.mode === 'bwrap', reservation?.members);

  const headMax = Math.floor(options.maxOutputChars / 2);
  const spill = new StreamingSpill(cwd, ctx.toolUseId);
  const output = new OutputCollector(headMax, options.maxOutputChars - headMax, spill);
  // One decoder per stream so a multi-byte character split across chunks is not mangled.
  for (const stream of [child.stdout, child.stderr]) {
    const decoder = new StringDecoder('utf8');
    stream.on('data', (chunk: Buffer) => output.push(decoder.write(chunk)));
    stream.on('end', () => output.push(decoder.end()));
  }

  let stopReason: 'timeout' | 'cancelled' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (reason: 'timeout' | 'cancelled') => {
    if (stopReason || pid === undefined) return;
    stopReason = reason;
    processRegistry.terminate(pid);
    killTimer = setTimeout(() => processRegistry.kill(pid), KILL_GRACE_MS);
  };

  const timeoutTimer = setTimeout(() => stop('timeout'), timeoutMs);
  const onAbort = () => stop('cancelled');
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const heartbeatTimer = setInterval(
    () => ctx.heartbeat({ tool: 'bash', elapsedMs: Date.now() - started, outputChars: output.length }),
    options.heartbeatIntervalMs,
  );

  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await new Promise((resolve, reject) => {
      let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let drainTimer: NodeJS.Timeout | undefined;
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        exited = { code, signal };
        // Background children may keep the pipes open for ever; don't wait on them past a grace.
        drainTimer = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          resolve({ code, signal });
        }, PIPE_DRAIN_GRACE_MS);
      });
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        if (drainTimer) clearTimeout(drainTimer);
        resolve(exited ?? { code, signal });
      });
    });
  } finally {
    clearTimeout(timeoutTimer);
    clearInterval(heartbeatTimer);
    ctx.signal.removeEventListener('abort', onAbort);
  }
  if (pid !== undefined) {
    if (killTimer) {
      // The shell is gone; finish the job at once so nothing a timed-out or cancelled command started
      // (a child that ignored SIGTERM or closed its output) outlives the call.
      clearTimeout(killTimer);
      processRegistry.kill(pid);
    }
    // A sandbox ends with its shell; an unsandboxed background process stays tracked until the worker stops.
    processRegistry.settle(pid);
  }

  await spill.close();
  const text = output.toString();
  const body = text === '' ? '(no output)' : text.endsWith('\n') ? text.slice(0, -1) : text;
  const warning = sandbox.mode === 'off' ? `\n${UNSANDBOXED_NOTE}` : '';
  const failed =
    stopReason !== undefined ||
    exit.code !== 0 ||
    reservation?.limitReached() === true ||
    reservation?.killedByLimit() !== undefined;
  const limitNote = reservation?.limitNote(failed);
  const notes = `${limitNote ? `\n${limitNote}` : ''}${warning}`;
  if (stopReason === 'timeout') {
    return withNotes(body, `\nCommand timed out after ${statedTimeoutMs} ms and was killed.${notes}`, true);
  }
  if (stopReason === 'cancelled') {
    return withNotes(body, `\nCommand was cancelled after ${Date.now() - started} ms and was killed.${notes}`, true);
  }
  const status = exit.code !== null ? `Exit code: ${exit.code}` : `Killed by signal ${exit.signal ?? 'unknown'}`;
  return withNotes(body, `\n${status}${notes}`, failed);
}

/**
 * The output followed by the notes that matter (exit code, timeout, the sandbox warning), cut
 * further if need be so the whole stays within the registry's cap, whose own cut takes the end.
 */
function withNotes(body: string, notes: string, isError: boolean): ToolResult {
  const room = MAX_TOOL_OUTPUT_CHARS - notes.length;
  if (body.length > room) {
    const cut = '\n[… output cut to fit …]';
    body = cutPrefix(body, Math.max(0, room - cut.length)) + cut;
  }
  return { content: body + notes, isError };
}
