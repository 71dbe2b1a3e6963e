import type { HookEventName } from '../shared/hooks-io';

/**
 * The event as a hook receives it: Claude Code's hook input (JSON on a command's stdin, the argument
 * of a function hook). Fields a given event does not have are absent.
 */
export interface HookEventPayload {
  /** The workflow id. */
  session_id: string;
  hook_event_name: HookEventName;
  /** The run's workspace (the hook's working directory). */
  cwd: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  /** PostToolUse: what the tool returned. */
  tool_response?: { content: string; is_error: boolean };
  /** PostToolUseFailure: the tool's error text, and whether an interrupt stopped it. */
  error?: string;
  is_interrupt?: boolean;
  /** UserPromptSubmit. */
  prompt?: string;
  /** Stop. */
  stop_hook_active?: boolean;
}

/**
 * What a hook answers: the JSON a command prints on stdout (exit code 0), or what a function hook
 * returns. Claude Code's shape; fields an event does not use are ignored.
 */
export interface HookResult {
  /** `false` ends the run (after this event), whatever else was decided. */
  continue?: boolean;
  stopReason?: string;
  /** A message for the operator (reported with the run), not the model. */
  systemMessage?: string;
  /** PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop: `block` with a reason. (`approve` is PreToolUse's old allow.) */
  decision?: 'block' | 'approve';
  reason?: string;
  hookSpecificOutput?: {
    hookEventName?: string;
    /** PreToolUse. */
    permissionDecision?: 'allow' | 'deny' | 'ask';
    permissionDecisionReason?: string;
    /** PreToolUse (with `allow` or `ask`): the input the tool runs with instead. */
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
  };
}

/** Passed to function hooks and `canExecuteTool`. */
export interface HookContext {
  /** Aborted when the run is cancelled or the hook times out. */
  signal: AbortSignal;
  runId: string;
  workspace: string;
  toolUseId?: string;
}

/** A hook registered in code by a custom worker. */
export interface FunctionHook {
  /** Tool name matcher, as in settings files (PreToolUse, PostToolUse, PostToolUseFailure only). */
  matcher?: string;
  /** Seconds before the hook counts as failed (default 60). */
  timeout?: number;
  run: (event: HookEventPayload, ctx: HookContext) => Promise<HookResult | void> | HookResult | void;
}

/** Seed 002/004's permission check (Claude Agent SDK's `canUseTool`). */
export type PermissionResult =
  { behavior: 'allow'; updatedInput?: Record<string, unknown> } | { behavior: 'deny'; message: string };
export type CanExecuteTool = (
  toolName: string,
  input: unknown,
  ctx: HookContext,
) => Promise<PermissionResult> | PermissionResult;

/** Hooks a custom worker registers as functions. They run after the hooks of the settings files. */
export type FunctionHooks = { [E in HookEventName]?: FunctionHook[] } & {
  /** Runs for every tool call the PreToolUse hooks did not deny, with the input as they rewrote it. */
  canExecuteTool?: CanExecuteTool;
};

/** Where a hook comes from; decides whether it runs sandboxed and whether its `allow` counts. */
export type HookSource = 'workspace' | 'worker' | 'function';
