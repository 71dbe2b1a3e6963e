/**
 * Hooks: Claude Code's hook events (PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit,
 * Stop) configured in settings files or registered as functions by a custom worker, and the
 * `canExecuteTool` permission check. The activities that run them are in src/activities/hooks.ts.
 * See docs/hooks.md.
 */
export { hookEnv, MAX_HOOK_OUTPUT_BYTES, runCommandHook, type CommandOutcome, type CommandSpec } from './command';
export { compileMatcher, type ToolMatcher } from './matcher';
export { eventPayload, eventsWithHooks, MAX_UPDATED_INPUT_BYTES, runHooks, type HookRunContext } from './run-hooks';
export {
  loadRunSettings,
  loadWorkerSettings,
  loadWorkspaceSettings,
  MAX_HOOKS_PER_EVENT,
  MAX_SETTINGS_BYTES,
  parseSettings,
  SETTINGS_ENV_VAR,
  unknownToolWarnings,
  WORKSPACE_SETTINGS_PATH,
  workerSettingsPath,
  type LoadedSettings,
} from './settings';
export type {
  CanExecuteTool,
  FunctionHook,
  FunctionHooks,
  HookContext,
  HookEventPayload,
  HookResult,
  HookSource,
  PermissionResult,
} from './types';
export { MAX_HOOK_TEXT_CHARS } from './verdict';
