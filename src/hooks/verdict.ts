import { z } from 'zod';
import type { HookEventName } from '../shared/hooks-io';
import type { CommandOutcome } from './command';
import type { HookResult, HookSource } from './types';
import { cutPrefix } from '../shared/well-formed';

/**
 * One hook's answer, read the way Claude Code reads it: exit code 2 blocks with stderr as the reason;
 * exit code 0 may print JSON that decides; any other end is a non-blocking error, reported — except
 * for PreToolUse, where a hook that failed in any way (crash, other exit code, bad JSON, timeout)
 * denies the call: a guard that cannot answer must not let the call through.
 */

/** Reasons and contexts are cut to this many characters each (they reach the model and history). */
export const MAX_HOOK_TEXT_CHARS = 10_000;

export interface HookVerdict {
  source: HookSource;
  decision?: 'allow' | 'deny' | 'ask';
  reason?: string;
  updatedInput?: Record<string, unknown>;
  additionalContext?: string;
  block?: boolean;
  stopRun?: string;
  /** For the operator: what failed, or a hook's `systemMessage`. */
  report?: string;
}

export function cut(text: string, max = MAX_HOOK_TEXT_CHARS): string {
  return text.length <= max ? text : `${cutPrefix(text, max)}… [cut: ${text.length - max} more characters]`;
}

const resultSchema = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  decision: z.enum(['block', 'approve']).optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
});

/** A hook that failed: fails closed for PreToolUse, is only reported for the other events. */
export function failedVerdict(event: HookEventName, source: HookSource, label: string, why: string): HookVerdict {
  const report = `${event} hook ${label} failed: ${why.replace(/\.+$/, '')}`;
  if (event !== 'PreToolUse') return { source, report: `${report} (ignored: not blocking for ${event})` };
  return { source, decision: 'deny', reason: `${report}. The call is denied (hooks fail closed).`, report };
}

/** Reads a command hook's outcome. */
export function commandVerdict(
  event: HookEventName,
  source: HookSource,
  label: string,
  outcome: CommandOutcome,
): HookVerdict {
  if (outcome.failure !== undefined) return failedVerdict(event, source, label, outcome.failure);
  if (outcome.code === 2) {
    const reason = cut(outcome.stderr.trim() || `blocked by the ${event} hook ${label}`);
    return event === 'PreToolUse' ? { source, decision: 'deny', reason } : { source, block: true, reason };
  }
  if (outcome.code !== 0) {
    const stderr = outcome.stderr.trim();
    const why = `exit code ${outcome.code ?? 'none (killed by a signal)'}${stderr ? `: ${cut(stderr, 2000)}` : ''}`;
    return failedVerdict(event, source, label, why);
  }
  const stdout = outcome.stdout.trim();
  if (stdout === '') return { source };
  if (!stdout.startsWith('{')) {
    // Claude Code adds UserPromptSubmit's plain stdout to the context; elsewhere it is only logged.
    return event === 'UserPromptSubmit' ? { source, additionalContext: cut(stdout) } : { source };
  }
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (error) {
    return failedVerdict(event, source, label, `its stdout is not valid JSON (${(error as Error).message})`);
  }
  return resultVerdict(event, source, label, json);
}

/** Reads a hook's JSON answer (a command's stdout, a function hook's return value). */
export function resultVerdict(event: HookEventName, source: HookSource, label: string, json: unknown): HookVerdict {
  if (json === undefined || json === null) return { source };
  const parsed = resultSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? `${issue.path.join('.') || '(top level)'}: ${issue.message}` : 'invalid';
    return failedVerdict(event, source, label, `its answer does not have Claude Code's hook output shape (${where})`);
  }
  const result = parsed.data as HookResult;
  const specific = result.hookSpecificOutput;
  const verdict: HookVerdict = { source };
  if (result.systemMessage) verdict.report = `${event} hook ${label}: ${cut(result.systemMessage, 2000)}`;
  if (result.continue === false) verdict.stopRun = cut(result.stopReason ?? `the ${event} hook ${label} ended the run`);
  if (specific?.additionalContext) verdict.additionalContext = cut(specific.additionalContext);
  if (event === 'PreToolUse') {
    // `decision: approve|block` is Claude Code's older form of allow|deny.
    const legacy = result.decision === 'approve' ? 'allow' : result.decision === 'block' ? 'deny' : undefined;
    const decision = specific?.permissionDecision ?? legacy;
    const reason = specific?.permissionDecisionReason ?? result.reason;
    if (decision) verdict.decision = decision;
    if (decision === 'deny') verdict.reason = cut(reason?.trim() || `denied by the PreToolUse hook ${label}`);
    else if (reason) verdict.reason = cut(reason);
    if (specific?.updatedInput) {
      if (decision === 'allow' || decision === 'ask') verdict.updatedInput = specific.updatedInput;
      else verdict.report = `PreToolUse hook ${label}: updatedInput ignored (it takes permissionDecision allow or ask)`;
    }
    return verdict;
  }
  if (result.decision === 'block') {
    verdict.block = true;
    verdict.reason = cut(result.reason?.trim() || `blocked by the ${event} hook ${label}`);
  }
  return verdict;
}
