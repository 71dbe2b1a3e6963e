import {
  DEFAULT_HOOK_TIMEOUT_MS,
  MAX_HOOK_TIMEOUT_MS,
  type HookEventName,
  type HookOutcome,
  type RunHookInput,
} from '../shared/hooks-io';
import type { SandboxStatus } from '../sandbox';
import type { SandboxLimits, TmpfsBudget } from '../sandbox/limits';
import { runCommandHook, type CommandSpec } from './command';
import { compileMatcher } from './matcher';
import { OutcomeBuilder } from './merge';
import type { LoadedSettings, SettingsHook } from './settings';
import type { FunctionHook, FunctionHooks, HookContext, HookEventPayload, PermissionResult } from './types';
import { commandVerdict, cut, failedVerdict, resultVerdict, type HookVerdict } from './verdict';

/** A rewritten tool input above this size (as JSON) fails the hook: it would be recorded in history. */
export const MAX_UPDATED_INPUT_BYTES = 256 * 1024;

const TOOL_EVENTS: readonly HookEventName[] = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'];

export interface HookRunContext {
  workspace: string;
  /** Settings files, the workspace's first (its hooks run first and sandboxed). */
  settings: LoadedSettings[];
  functions?: FunctionHooks;
  /** The bash tool's sandbox, which workspace hooks run in. */
  sandbox: SandboxStatus;
  /** A sandboxed hook's limits and the tmpfs budget it shares (default: the worker's, as for bash). */
  limits?: SandboxLimits;
  tmpfsBudget?: TmpfsBudget;
  /** Workspace hooks get network when the run's bash does (`network: true`). */
  network?: boolean;
  signal: AbortSignal;
}

/** The event as hooks receive it, for a given tool input. */
export function eventPayload(input: RunHookInput, workspace: string, toolInput: unknown): HookEventPayload {
  const payload: HookEventPayload = { session_id: input.runId, hook_event_name: input.event, cwd: workspace };
  if (TOOL_EVENTS.includes(input.event)) {
    if (input.toolName !== undefined) payload.tool_name = input.toolName;
    payload.tool_input = toolInput;
    if (input.toolUseId !== undefined) payload.tool_use_id = input.toolUseId;
  }
  if (input.event === 'PostToolUse' && input.toolResult) {
    payload.tool_response = { content: input.toolResult.content, is_error: input.toolResult.isError };
  }
  if (input.event === 'PostToolUseFailure') {
    payload.error = input.toolResult?.content ?? '';
    payload.is_interrupt = input.isInterrupt === true;
  }
  if (input.event === 'UserPromptSubmit') payload.prompt = input.prompt ?? '';
  if (input.event === 'Stop') payload.stop_hook_active = input.stopHookActive === true;
  return payload;
}

/** Which events have any hook: settings (an invalid file counts for PreToolUse), functions, canExecuteTool. */
export function eventsWithHooks(settings: LoadedSettings[], functions?: FunctionHooks): HookEventName[] {
  const events = new Set<HookEventName>();
  for (const file of settings) {
    if (file.invalid) events.add('PreToolUse');
    for (const [event, hooks] of Object.entries(file.hooks)) if (hooks.length) events.add(event as HookEventName);
  }
  for (const [event, hooks] of Object.entries(functions ?? {})) {
    if (event === 'canExecuteTool') continue;
    if (Array.isArray(hooks) && hooks.length) events.add(event as HookEventName);
  }
  if (functions?.canExecuteTool) events.add('PreToolUse');
  return [...events].sort();
}

/** Runs every hook of one event, tier by tier, and merges their answers. Never throws. */
export async function runHooks(input: RunHookInput, ctx: HookRunContext): Promise<HookOutcome> {
  const builder = new OutcomeBuilder(input.event);
  const toolName = input.toolName ?? '';
  const currentInput = () => builder.updatedInput ?? input.toolInput;
  const stopEarly = () => input.event === 'PreToolUse' && builder.denied;

  for (const file of ctx.settings) {
    if (stopEarly()) break;
    if (file.invalid) {
      builder.addTier([failedVerdict(input.event, file.source, `settings (${file.file})`, file.invalid)]);
      continue;
    }
    const hooks = (file.hooks[input.event] ?? []).filter((h) => h.matches(toolName));
    if (!hooks.length) continue;
    const payload = JSON.stringify(eventPayload(input, ctx.workspace, currentInput()));
    builder.addTier(await Promise.all(hooks.map((hook) => runSettingsHook(input.event, hook, payload, ctx))));
  }

  const registered: unknown = ctx.functions?.[input.event];
  const functions = (Array.isArray(registered) ? (registered as FunctionHook[]) : []).filter((h) =>
    matchesFunction(h, input.event, toolName),
  );
  if (functions.length && !stopEarly()) {
    const payload = eventPayload(input, ctx.workspace, currentInput());
    builder.addTier(
      await Promise.all(functions.map((hook, i) => runFunctionHook(input, hook, `#${i + 1} (function)`, payload, ctx))),
    );
  }
  const canExecute = ctx.functions?.canExecuteTool;
  if (input.event === 'PreToolUse' && canExecute && !stopEarly()) {
    builder.addTier([await runPermissionCheck(input, canExecute, currentInput(), ctx)]);
  }
  const outcome = builder.build();
  if (outcome.updatedInput && Buffer.byteLength(JSON.stringify(outcome.updatedInput)) > MAX_UPDATED_INPUT_BYTES) {
    const why = `the rewritten tool input is over ${MAX_UPDATED_INPUT_BYTES} bytes as JSON`;
    return {
      decision: 'deny',
      reason: `PreToolUse hooks failed: ${why}. The call is denied.`,
      reports: [...outcome.reports, why],
    };
  }
  return outcome;
}

function matchesFunction(hook: FunctionHook, event: HookEventName, toolName: string): boolean {
  if (!TOOL_EVENTS.includes(event)) return true;
  try {
    return compileMatcher(hook.matcher)(toolName);
  } catch {
    return true; // An invalid matcher must not skip a guard: the hook runs and can decide for itself.
  }
}

function labelOf(hook: SettingsHook): string {
  const text = hook.command ?? hook.unsupported ?? '';
  return `'${cut(text.replace(/\s+/g, ' '), 80)}' (${hook.source} settings)`;
}

async function runSettingsHook(
  event: HookEventName,
  hook: SettingsHook,
  payload: string,
  ctx: HookRunContext,
): Promise<HookVerdict> {
  const label = labelOf(hook);
  if (hook.command === undefined) return failedVerdict(event, hook.source, label, hook.unsupported ?? 'unsupported');
  const outcome = await runCommandHook({
    command: hook.command,
    stdin: payload,
    workspace: ctx.workspace,
    timeoutMs: Math.min(hook.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, MAX_HOOK_TIMEOUT_MS),
    signal: ctx.signal,
    // The model can write the workspace's settings: its hooks get no more than the model's bash has.
    ...(hook.sandboxed ? { sandbox: sandboxOf(ctx) } : {}),
  });
  return commandVerdict(event, hook.source, label, outcome);
}

function sandboxOf(ctx: HookRunContext): NonNullable<CommandSpec['sandbox']> {
  return {
    status: ctx.sandbox,
    network: ctx.network === true,
    ...(ctx.limits ? { limits: ctx.limits } : {}),
    ...(ctx.tmpfsBudget ? { budget: ctx.tmpfsBudget } : {}),
  };
}

/** Runs `work` with a deadline and an abort signal joined to the run's. */
async function withDeadline<T>(
  timeoutMs: number,
  outer: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; why: string }> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  outer.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<{ ok: false; why: string }>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ ok: false, why: `it timed out after ${timeoutMs / 1000} s` });
    }, timeoutMs);
  });
  const cancelled = new Promise<{ ok: false; why: string }>((resolve) => {
    if (outer.aborted) resolve({ ok: false, why: 'the run was cancelled' });
    outer.addEventListener('abort', () => resolve({ ok: false, why: 'the run was cancelled' }), { once: true });
  });
  try {
    const run = (async () => ({ ok: true as const, value: await work(controller.signal) }))().catch(
      (error: unknown) => ({ ok: false as const, why: `it threw: ${errorText(error)}` }),
    );
    return await Promise.race([run, deadline, cancelled]);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onAbort);
  }
}

function errorText(error: unknown): string {
  return cut(error instanceof Error ? error.message : String(error), 2000);
}

function hookContext(input: RunHookInput, ctx: HookRunContext, signal: AbortSignal): HookContext {
  return {
    signal,
    runId: input.runId,
    workspace: ctx.workspace,
    ...(input.toolUseId !== undefined ? { toolUseId: input.toolUseId } : {}),
  };
}

async function runFunctionHook(
  input: RunHookInput,
  hook: FunctionHook,
  label: string,
  payload: HookEventPayload,
  ctx: HookRunContext,
): Promise<HookVerdict> {
  const timeoutMs = Math.min((hook.timeout ?? DEFAULT_HOOK_TIMEOUT_MS / 1000) * 1000, MAX_HOOK_TIMEOUT_MS);
  const result = await withDeadline(timeoutMs, ctx.signal, async (signal) =>
    hook.run(structuredClone(payload), hookContext(input, ctx, signal)),
  );
  if (!result.ok) return failedVerdict(input.event, 'function', label, result.why);
  return resultVerdict(input.event, 'function', label, result.value);
}

async function runPermissionCheck(
  input: RunHookInput,
  check: NonNullable<FunctionHooks['canExecuteTool']>,
  toolInput: unknown,
  ctx: HookRunContext,
): Promise<HookVerdict> {
  const label = 'canExecuteTool';
  const result = await withDeadline(DEFAULT_HOOK_TIMEOUT_MS, ctx.signal, async (signal) =>
    check(input.toolName ?? '', structuredClone(toolInput), hookContext(input, ctx, signal)),
  );
  if (!result.ok) return failedVerdict('PreToolUse', 'function', label, result.why);
  const answer = result.value as PermissionResult | undefined;
  if (answer?.behavior === 'deny') {
    return { source: 'function', decision: 'deny', reason: cut(String(answer.message || 'denied by canExecuteTool')) };
  }
  if (answer?.behavior !== 'allow') {
    return failedVerdict(
      'PreToolUse',
      'function',
      label,
      "it returned neither {behavior: 'allow'} nor {behavior: 'deny'}",
    );
  }
  const updated = answer.updatedInput;
  if (updated !== undefined && (typeof updated !== 'object' || updated === null || Array.isArray(updated))) {
    return failedVerdict('PreToolUse', 'function', label, 'its updatedInput is not an object');
  }
  return { source: 'function', decision: 'allow', ...(updated ? { updatedInput: updated } : {}) };
}
