import { toolResultBlock } from '../../shared/conversation';
import { thinkingOf, textOf, type ModelResponse } from '../../shared/messages';
import { LoopExit, type Next } from '../run/loop-exit';
import type { Run } from '../run/run';
import { runBoundedTurn } from './bounded-turn';
import { finishTurn } from './finish';
import { textToolTurn } from './text-turn';
import {
  CONTINUE_AFTER_MAX_TOKENS,
  DONE_TOOL_NUDGE,
  classifyTurn,
  toolCallsAtQuietStop,
  truncatedToolCallError,
  type TurnOutcome,
} from './turn-outcome';
import { ErrorTypes } from '../../shared/constants';

/**
 * What the loop does with one model turn, by its outcome (docs/architecture.md#stop-reasons): run the
 * tools, finish (or, in a session, wait for the next message), refuse, continue a cut answer, resume
 * a paused turn, compact after the context window filled. The turn is already in the conversation;
 * an exit ends the loop.
 */
export function handleTurn(run: Run, response: ModelResponse): Promise<Next> {
  const { state, emit } = run;
  const { textTools, requireDone } = run.settings;
  let outcome = classifyTurn(response);
  const quietStopCalls = toolCallsAtQuietStop(response);
  if (outcome.kind === 'final' && !textTools && quietStopCalls.length > 0) {
    emit({
      kind: 'notice',
      message: `stop reason ${response.stopReason === null ? 'null' : `'${response.stopReason}'`} with tool calls; running them`,
    });
    outcome = { kind: 'tools', toolUses: quietStopCalls };
  }
  if (outcome.kind === 'tools') run.toolChoice.called(outcome.toolUses.map((t) => t.name));
  // An answer's text is carried once, by the `answer` event (a cut answer's first part included).
  const answering =
    outcome.kind === 'final' || (outcome.kind === 'truncated' && outcome.toolUses.length === 0 && !textTools);
  narrate(run, response, answering && !requireDone);
  if (outcome.kind === 'final' && textTools) {
    // A reply cut at max_tokens and continued is read whole: a `<tool_code>` block may span both.
    const whole = state.textPrefix + outcome.text;
    state.textPrefix = '';
    return textTurn(run, whole);
  }
  return afterOutcome(run, outcome);
}

async function textTurn(run: Run, text: string): Promise<Next> {
  const handled = await textToolTurn(run, text);
  return 'exit' in handled ? (handled.exit ?? 'go_on') : afterOutcome(run, { kind: 'final', text: handled.answer });
}

/** The loop's next step for a classified turn. */
async function afterOutcome(run: Run, outcome: TurnOutcome): Promise<Next> {
  const { state, emit } = run;
  const { conversation } = state;
  const { requireDone, maxTokens, model } = run.settings;
  switch (outcome.kind) {
    case 'tools': {
      if (outcome.unexpectedStop) {
        emit({
          kind: 'notice',
          message: `unknown stop reason '${outcome.unexpectedStop}' with tool calls; running them`,
        });
      }
      state.textPrefix = '';
      const { results, doneSummary } = await runBoundedTurn(run, outcome.toolUses);
      conversation.append({ role: 'user', content: results });
      return doneSummary !== undefined ? ((await finishTurn(run, doneSummary)) ?? 'go_on') : 'go_on';
    }
    case 'final': {
      // A model that cannot be forced to call a tool is asked again (calls/tool-choice.ts), a bounded number of times.
      const again = run.toolChoice.reask();
      if (again !== undefined) {
        conversation.append({ role: 'user', content: again });
        emit({ kind: 'notice', message: 'answered without the tool call toolChoice requires; asking again' });
        return 'go_on';
      }
      if (requireDone) {
        // done-tool mode: only the done tool ends the run; a text-only reply gets a nudge.
        conversation.append({ role: 'user', content: DONE_TOOL_NUDGE });
        emit({ kind: 'notice', message: 'answered without calling done; nudging the model to continue' });
        return 'go_on';
      }
      return (await finishTurn(run, state.completeText(outcome.text))) ?? 'go_on';
    }
    case 'refused':
      return new LoopExit('refused', outcome.text);
    case 'truncated':
      if (outcome.toolUses.length === 0) state.holdTruncatedText(outcome.text);
      conversation.append({
        role: 'user',
        content:
          outcome.toolUses.length > 0
            ? outcome.toolUses.map((t) => toolResultBlock(t.id, truncatedToolCallError(maxTokens), true))
            : CONTINUE_AFTER_MAX_TOKENS,
      });
      emit({ kind: 'notice', message: `response reached max_tokens (${maxTokens}); asking the model to continue` });
      return 'go_on';
    case 'paused':
      // The assistant turn is last in the conversation; the next call lets the model resume it.
      return 'go_on';
    case 'context_exceeded':
      // Compact and go on, unless compacting just happened and the conversation still does not fit.
      if (state.compactions > 0 && conversation.length <= 2) {
        return new LoopExit('failed', outcome.text || state.lastAssistantText, {
          type: ErrorTypes.ContextWindowExceeded,
          message: `the conversation does not fit the context window of ${model} even after compaction`,
        });
      }
      // The partial turn stays; the compaction call summarizes it with the rest.
      state.needsCompaction = true;
      emit({ kind: 'notice', message: `the conversation reached the context window of ${model}; compacting` });
      return 'go_on';
    default: {
      const unhandled: never = outcome;
      throw new Error(`unhandled turn outcome ${JSON.stringify(unhandled)}`);
    }
  }
}

/**
 * The order of events for a turn: its reasoning, then its text (unless that text is the final
 * answer, which the `answer` event carries once), then per tool call its start and result.
 */
function narrate(run: Run, response: ModelResponse, isAnswer: boolean): void {
  const iteration = run.state.iteration;
  const thinking = thinkingOf(response.content);
  if (thinking) run.emit({ kind: 'reasoning', iteration, text: thinking });
  const text = textOf(response.content);
  // Under the text protocol the reply is read first: its thought is narrated, its call is a tool call.
  if (text && !isAnswer && !run.settings.textTools) run.emit({ kind: 'text', iteration, text });
}
