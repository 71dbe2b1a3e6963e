import type { HookEventName, HookOutcome } from '../shared/hooks-io';
import { cut, MAX_HOOK_TEXT_CHARS, type HookVerdict } from './verdict';

/**
 * Merges the verdicts of an event's hooks into one {@link HookOutcome}. Hooks run in tiers: the
 * workspace's, then the worker's, then the custom worker's functions (and `canExecuteTool`); each
 * tier sees the tool input as the tiers before it rewrote it, so the operator's hooks check what
 * will really run. Within a tier hooks run side by side, as in Claude Code, and see the same input.
 *
 * Any deny wins (PreToolUse stops at the first tier that denies); then ask; an `allow` counts only
 * from the operator's hooks (a workspace hook is code the model can write: it may deny or ask, never
 * grant); `updatedInput` comes from the last allowing hook of a tier that gave one; contexts and
 * reasons are concatenated in order.
 */
export class OutcomeBuilder {
  private denyReasons: string[] = [];
  private askReasons: string[] = [];
  private allowReasons: string[] = [];
  private allowed = false;
  private asked = false;
  private blockReasons: string[] = [];
  private contexts: string[] = [];
  private stopRun: string | undefined;
  private readonly reports: string[] = [];
  /** The tool input as rewritten so far, when a hook rewrote it. */
  updatedInput: Record<string, unknown> | undefined;

  constructor(private readonly event: HookEventName) {}

  get denied(): boolean {
    return this.denyReasons.length > 0;
  }

  report(line: string): void {
    this.reports.push(cut(line, 2000));
  }

  /** Adds one tier's verdicts, in configuration order. */
  addTier(verdicts: HookVerdict[]): void {
    let tierInput: Record<string, unknown> | undefined;
    for (const v of verdicts) {
      if (v.report) this.report(v.report);
      if (v.additionalContext) this.contexts.push(v.additionalContext);
      if (v.stopRun !== undefined && this.stopRun === undefined) this.stopRun = v.stopRun;
      if (v.block) this.blockReasons.push(v.reason ?? `blocked by a ${this.event} hook`);
      switch (v.decision) {
        case 'deny':
          this.denyReasons.push(v.reason ?? `denied by a ${this.event} hook`);
          break;
        case 'ask':
          this.asked = true;
          if (v.reason) this.askReasons.push(v.reason);
          if (v.updatedInput) tierInput = v.updatedInput;
          break;
        case 'allow':
          if (v.source !== 'workspace') {
            this.allowed = true;
            if (v.reason) this.allowReasons.push(v.reason);
          }
          if (v.updatedInput) tierInput = v.updatedInput;
          break;
        case undefined:
          break;
      }
    }
    if (tierInput && !this.denied) this.updatedInput = tierInput;
  }

  build(): HookOutcome {
    const outcome: HookOutcome = { decision: 'none', reports: this.reports };
    if (this.event === 'PreToolUse') {
      if (this.denied) {
        outcome.decision = 'deny';
        outcome.reason = joinCut(this.denyReasons);
      } else {
        outcome.decision = this.asked ? 'ask' : this.allowed ? 'allow' : 'none';
        const reasons = this.asked ? this.askReasons : this.allowReasons;
        if (reasons.length) outcome.reason = joinCut(reasons);
        if (this.updatedInput) outcome.updatedInput = this.updatedInput;
      }
    } else if (this.blockReasons.length) {
      outcome.block = true;
      outcome.reason = joinCut(this.blockReasons);
    }
    if (this.contexts.length) outcome.additionalContext = joinCut(this.contexts);
    if (this.stopRun !== undefined) outcome.stopRun = this.stopRun;
    return outcome;
  }
}

function joinCut(parts: string[]): string {
  return cut(parts.join('\n\n'), MAX_HOOK_TEXT_CHARS);
}
