import { Context } from '@temporalio/activity';
import {
  eventsWithHooks,
  loadRunSettings,
  runHooks,
  unknownToolWarnings,
  workerSettingsPath,
  type FunctionHooks,
} from '../hooks';
import {
  HOOK_HEARTBEAT_INTERVAL_MS,
  type HookEventsInput,
  type HookOutcome,
  type HookPlan,
  type RunHookInput,
} from '../shared/hooks-io';
import { cutChars } from '../shared/bounds';
import { detectSandbox, sandboxStatus, type SandboxSetting } from '../sandbox';
import { limitsFromEnv, type SandboxLimits, type TmpfsBudget } from '../sandbox/limits';

export interface HookActivityDeps {
  /** Hooks registered as functions by a custom worker, with its `canExecuteTool`. */
  hooks?: FunctionHooks;
  /** The worker-wide settings file; default `DURABLE_AGENT_SETTINGS`, else `~/.durable-agent/settings.json`. */
  settingsFile?: string;
  /** Workspace for runs that name none (the worker's working directory by default). */
  defaultWorkspace?: string;
  /**
   * Checks the workspace a run recorded before its hooks run there (the worker's workspace rules);
   * its real path, or an error that fails the hooks closed.
   */
  verifyWorkspace?: (workspace: string) => Promise<string>;
  /** The sandbox workspace hooks run in; default: the bash tool's (`DURABLE_AGENT_SANDBOX`). */
  sandbox?: SandboxSetting;
  /**
   * Limits of a sandboxed hook, as of a bash call; default: `DURABLE_AGENT_SANDBOX_MAX_PROCESSES`
   * and the built-in /tmp and /dev/shm sizes.
   */
  limits?: Partial<SandboxLimits>;
  /** The tmpfs budget sandboxed hooks share with bash calls; default: the worker's. */
  tmpfsBudget?: TmpfsBudget;
  /** The worker's tool names: settings whose matchers name other tools are reported at run start. */
  toolNames?: string[];
  /** How often `runHook` heartbeats (ms). */
  heartbeatIntervalMs?: number;
}

/**
 * The hook activities. `hookEvents` runs once at run start and says which events have hooks (so a
 * run without hooks schedules nothing more); `runHook` runs the hooks of one event. The workflow
 * schedules `runHook` with ONE attempt (`maximumAttempts: 1`): a hook is never run twice for one
 * call, and a worker lost mid-hook shows as a timeout, which the workflow treats as a failed hook
 * (PreToolUse: the call is denied). See docs/hooks.md.
 */
export function createHookActivities(deps: HookActivityDeps = {}) {
  const settingsFile = deps.settingsFile ?? workerSettingsPath();
  const heartbeatEveryMs = deps.heartbeatIntervalMs ?? HOOK_HEARTBEAT_INTERVAL_MS;
  const sandbox = () => (deps.sandbox ? detectSandbox({ DURABLE_AGENT_SANDBOX: deps.sandbox }) : sandboxStatus());
  // Read at creation, so a bad setting fails the worker's start with a message naming the variable.
  const fromEnv = limitsFromEnv();
  const limits: SandboxLimits = {
    maxProcesses: fromEnv.maxProcesses,
    tmpBytes: fromEnv.tmpBytes,
    shmBytes: fromEnv.shmBytes,
    ...deps.limits,
  };
  const workspaceOf = (input: { workspace?: string }) => input.workspace ?? deps.defaultWorkspace ?? process.cwd();

  /** The workspace's settings first: its hooks run first, so the operator's see what they rewrote. */
  const loadSettings = (workspace: string) => loadRunSettings(workspace, settingsFile);

  async function hookEvents(input: HookEventsInput = {}): Promise<HookPlan> {
    const settings = await loadSettings(workspaceOf(input ?? {}));
    const reports: string[] = [];
    for (const file of settings) {
      if (file.invalid)
        reports.push(`${file.invalid}. Its hooks are ignored and every tool call is denied until it is fixed.`);
      reports.push(...file.warnings);
      if (deps.toolNames) reports.push(...unknownToolWarnings(file, deps.toolNames));
    }
    return { events: eventsWithHooks(settings, deps.hooks), reports };
  }

  async function runHook(input: RunHookInput): Promise<HookOutcome> {
    const ctx = Context.current();
    const started = Date.now();
    const timer = setInterval(
      () =>
        ctx.heartbeat({
          hook: input.event,
          tool: cutChars(input.toolName ?? '', 64),
          elapsedSeconds: Math.round((Date.now() - started) / 1000),
        }),
      heartbeatEveryMs,
    );
    try {
      const configured = workspaceOf(input);
      const workspace = deps.verifyWorkspace ? await deps.verifyWorkspace(configured) : configured;
      return await runHooks(input, {
        workspace,
        settings: await loadSettings(workspace),
        ...(deps.hooks ? { functions: deps.hooks } : {}),
        sandbox: sandbox(),
        limits,
        ...(deps.tmpfsBudget ? { tmpfsBudget: deps.tmpfsBudget } : {}),
        network: input.network === true,
        signal: ctx.cancellationSignal,
      });
    } catch (error) {
      // Not a hook's failure but ours (a workspace that vanished, a bug): PreToolUse still fails closed.
      const why = `${input.event} hooks could not run: ${error instanceof Error ? error.message : String(error)}`;
      return input.event === 'PreToolUse'
        ? { decision: 'deny', reason: `${why}. The call is denied (hooks fail closed).`, reports: [why] }
        : { decision: 'none', reports: [why] };
    } finally {
      clearInterval(timer);
    }
  }

  return { hookEvents, runHook };
}

export type HookActivities = ReturnType<typeof createHookActivities>;
