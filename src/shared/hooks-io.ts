/**
 * Wire types of the hook activities (`hookEvents`, `runHook`): plain JSON, shared by the workflow
 * (which schedules them) and the worker (src/activities/hooks.ts, src/hooks/). See docs/hooks.md.
 */

/** The hook events, named as Claude Code names them. */
export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'UserPromptSubmit', 'Stop'] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** Longest a command hook may run (its `timeout`, in seconds, is capped here). */
export const MAX_HOOK_TIMEOUT_MS = 600_000;
/** A command hook's timeout when its settings give none (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/**
 * The `runHook` activity's start-to-close timeout: the hooks of one call run in three tiers, one
 * after another (workspace settings, worker settings, function hooks), each bounded by its longest
 * hook's timeout, then `canExecuteTool` (at most a minute); plus a minute for start-ups and kills.
 */
export const HOOK_ACTIVITY_TIMEOUT_MS = 3 * MAX_HOOK_TIMEOUT_MS + 2 * 60_000;
/** `runHook` heartbeats this often while hooks run; give the activity a heartbeat timeout well above it. */
export const HOOK_HEARTBEAT_INTERVAL_MS = 1_000;
/** Suggested heartbeat timeout for `runHook` (a lost worker is noticed this fast; PreToolUse then fails closed). */
export const HOOK_HEARTBEAT_TIMEOUT_MS = 30_000;

/** Input of `hookEvents`, called once at run start. */
export interface HookEventsInput {
  /** The run's workspace (the worker's default workspace when omitted). */
  workspace?: string;
}

/** What `hookEvents` answers: which events have hooks, so a run schedules `runHook` only for those. */
export interface HookPlan {
  /** Events with at least one hook (settings files, function hooks, or `canExecuteTool` for PreToolUse). */
  events: HookEventName[];
  /** Problems found in the settings (a bad file is reported and its hooks ignored): show them to the operator. */
  reports: string[];
}

/** Input of `runHook`: one event, with the fields Claude Code passes for it. */
export interface RunHookInput {
  event: HookEventName;
  /** The run's workspace: the hooks' working directory and where `.durable-agent/settings.json` is read. */
  workspace?: string;
  /** The workflow id: the hooks' `session_id`. */
  runId: string;
  /** PreToolUse, PostToolUse, PostToolUseFailure: the tool's name, input (as the model gave it) and call id. */
  toolName?: string;
  toolInput?: unknown;
  toolUseId?: string;
  /** PostToolUse, PostToolUseFailure: what the tool returned (`isError` true for PostToolUseFailure). */
  toolResult?: { content: string; isError: boolean };
  /** PostToolUseFailure: the call was stopped by an interrupt. */
  isInterrupt?: boolean;
  /** UserPromptSubmit: the prompt or sent message. */
  prompt?: string;
  /** Stop: true when the run is already going on because a Stop hook blocked an earlier stop. */
  stopHookActive?: boolean;
  /** The run allows network (`network: true`): workspace hooks run sandboxed with the same network as bash. */
  network?: boolean;
}

/**
 * What the hooks of one event decided, merged.
 * - PreToolUse: `decision` is `deny` when any hook denied (or failed: fail closed), else `ask` when any
 *   asked, else `allow` when a trusted hook (worker settings or a function hook) allowed, else `none`.
 *   `updatedInput`, when present, is the input the tool must run with (and the approval shows).
 * - PostToolUse, PostToolUseFailure: `block` with `reason` = feedback the model must see with the result.
 * - UserPromptSubmit: `block` = the prompt is not processed; `reason` is for the operator, not the model.
 * - Stop: `block` = the run does not stop; `reason` goes to the model as the next user message.
 * `additionalContext` goes to the model (PreToolUse/PostToolUse*: with the tool result; UserPromptSubmit:
 * with the prompt; Stop: ignored). `reports` are for operators only (failures, timeouts, bad output).
 */
export interface HookOutcome {
  decision: 'allow' | 'deny' | 'ask' | 'none';
  reason?: string;
  updatedInput?: Record<string, unknown>;
  additionalContext?: string;
  block?: boolean;
  /** A hook answered `"continue": false`: end the run now (`interrupted`), with this reason for the operator. */
  stopRun?: string;
  reports: string[];
}
