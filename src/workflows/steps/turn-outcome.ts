import type { ModelResponse, ToolUseBlock } from '../../shared/messages';
import { isToolUse, rawTextOf } from '../../shared/messages';

/**
 * What one model turn asks the loop to do next. Every stop reason maps to exactly one outcome,
 * and the loop handles them with an exhaustive switch.
 */
export type TurnOutcome =
  /** The model wants tools run; their results go back in one user message. */
  | { kind: 'tools'; toolUses: ToolUseBlock[]; unexpectedStop?: string }
  /** The model gave its final answer. */
  | { kind: 'final'; text: string }
  /** The model refused; tool calls from this turn are never executed. */
  | { kind: 'refused'; text: string }
  /**
   * The answer was cut at `max_tokens`. Tool calls in a truncated turn may be incomplete, so they
   * are answered with errors instead of being run; a text-only turn is asked to continue.
   */
  | { kind: 'truncated'; toolUses: ToolUseBlock[]; text: string }
  /** A long server-side turn was paused; sending the assistant turn back lets the model resume it. */
  | { kind: 'paused' }
  /** The conversation no longer fits the model's context window. */
  | { kind: 'context_exceeded'; text: string };

/**
 * `explicitUnknown`: a stop reason the loop does not know runs the turn's tool calls (runs
 * recorded before that treated it as the final answer and dropped them).
 */
export function classifyTurn(response: ModelResponse, explicitUnknown = true): TurnOutcome {
  const toolUses = response.content.filter(isToolUse);
  // Untrimmed: an answer cut at max_tokens and its continuation join exactly where the cut was.
  const text = rawTextOf(response.content);
  switch (response.stopReason) {
    case 'tool_use':
      // A tool_use stop without tool_use blocks has nothing to run: treat it as an answer.
      return toolUses.length > 0 ? { kind: 'tools', toolUses } : { kind: 'final', text };
    case 'end_turn':
    case 'stop_sequence':
    case null:
      return { kind: 'final', text };
    case 'refusal':
      return { kind: 'refused', text: text.trim() };
    case 'max_tokens':
      return { kind: 'truncated', toolUses, text };
    case 'pause_turn':
      return { kind: 'paused' };
    case 'model_context_window_exceeded':
      return { kind: 'context_exceeded', text: text.trim() };
    default: {
      const unexpected: never = response.stopReason;
      if (explicitUnknown && toolUses.length > 0)
        return { kind: 'tools', toolUses, unexpectedStop: String(unexpected) };
      return { kind: 'final', text: text.trim() || `(stopped: ${String(unexpected)})` };
    }
  }
}

/**
 * Tool calls in a turn that stopped at a stop sequence or without a stop reason. `classifyTurn`
 * reads such a turn as the answer, as runs recorded before did; its tool calls are still what the
 * model asked for, and left unanswered they make the next request invalid (every tool_use needs its
 * tool_result), so the loop runs them (see turn.ts).
 */
export function toolCallsAtQuietStop(response: ModelResponse): ToolUseBlock[] {
  if (response.stopReason !== 'stop_sequence' && response.stopReason !== null) return [];
  return response.content.filter(isToolUse);
}

/** The user message that asks the model to go on after a text answer was cut at `max_tokens`. */
export const CONTINUE_AFTER_MAX_TOKENS =
  'Your previous response was cut off because it reached the max_tokens limit. Continue exactly where you stopped.';

export function truncatedToolCallError(maxTokens: number): string {
  return (
    `Error: this tool call was not run because your response reached the max_tokens limit (${maxTokens}) ` +
    'and its arguments may be incomplete. Issue the call again, with smaller arguments if they were large.'
  );
}

/** The nudge after a text-only reply in done-tool mode. */
export const DONE_TOOL_NUDGE =
  'You replied without calling the `done` tool, so the task is not finished. Continue working; when the task ' +
  'is completely done, call `done` with a summary and the final answer.';
