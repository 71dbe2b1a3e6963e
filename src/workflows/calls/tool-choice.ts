import type { ToolChoice } from '../../shared/messages';
import { mustCallTool, rejectsForcedToolChoice, type RunToolChoice } from '../../shared/tool-choice';

/** How often a model that cannot be forced is asked again to call a tool before its answer stands. */
export const MAX_TOOL_CHOICE_REASKS = 2;

/**
 * The run's `toolChoice` over its calls (docs/models.md):
 * - `none` holds for every call;
 * - a forced tool (`{type: 'tool', name}`) holds until the model has called that tool;
 * - `any` (or its alias `required`): a tool call is required until the model has called one, and on
 *   every call in done-tool mode (where only `done` ends the run);
 * - on a model that rejects a forced tool choice (the 5.5-generation Claude models) the call is sent
 *   `auto` and an answer without the required call is met with a request to make it, at most
 *   {@link MAX_TOOL_CHOICE_REASKS} times in a row; then the answer stands.
 */
export class ToolChoicePolicy {
  private satisfied = false;
  private reasks = 0;
  private readonly emulated: boolean;

  constructor(
    private readonly choice: RunToolChoice | undefined,
    model: string,
    private readonly requireDone: boolean,
  ) {
    this.emulated = mustCallTool(choice) && rejectsForcedToolChoice(model);
  }

  /** What the next call is sent with. */
  next(): ToolChoice {
    const choice = this.choice;
    if (choice === 'none') return { type: 'none' };
    if (!this.required() || this.emulated) return { type: 'auto' };
    return typeof choice === 'object' ? { type: 'tool', name: choice.name } : { type: 'any' };
  }

  /** The tools a turn called: a required call made ends the requirement (outside done-tool mode). */
  called(names: readonly string[]): void {
    if (names.length === 0) return;
    this.reasks = 0;
    const choice = this.choice;
    if (typeof choice === 'object' ? names.includes(choice.name) : mustCallTool(choice)) this.satisfied = true;
  }

  /** For an answer without tool calls: the message that asks again for the required call, or undefined. */
  reask(): string | undefined {
    if (!this.emulated || !this.required() || this.reasks >= MAX_TOOL_CHOICE_REASKS) return undefined;
    // done-tool mode nudges towards `done` on its own.
    if (this.requireDone && typeof this.choice !== 'object') return undefined;
    this.reasks += 1;
    const choice = this.choice;
    return typeof choice === 'object'
      ? `You must call the \`${choice.name}\` tool now (this run's toolChoice requires it); reply with that tool call.`
      : "You must call one of your tools now (this run's toolChoice requires a tool call); reply with a tool call.";
  }

  private required(): boolean {
    if (!mustCallTool(this.choice)) return false;
    if (this.requireDone && typeof this.choice !== 'object') return true;
    return !this.satisfied;
  }
}
