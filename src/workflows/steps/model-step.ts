import {
  SUMMARY_FALLBACK_TEXT,
  SUMMARY_INSTRUCTION,
  textOf,
  type CallModelOutput,
  type ModelResponse,
  type RunEventInput,
} from '../../shared';
import { replyProse } from '../../shared/text-protocol';
import type { Conversation } from '../run/conversation';
import { failureMessage, failureType, stopping, type ModelCalls } from '../calls/model-calls';
import type { RunState } from '../run/run-state';
import type { StatusBoard } from '../run/status';
import type { ToolDispatch } from './tool-turn';
import { LoopExit } from './turn';

export interface StepContext {
  state: RunState;
  conversation: Conversation;
  modelCalls: ModelCalls;
  tools: ToolDispatch;
  board: StatusBoard;
  emit(event: RunEventInput): void;
  /** Usage and cost of a call; an iteration's call (`judge`) also decides whether compaction is due. */
  account(response: ModelResponse, judge?: boolean): number | null;
  /** Set from the worker when its bash runs unsandboxed or cannot run: the run's details say so. */
  sandbox: { warning?: string };
  /** Under the text protocol a reply's event text is its prose: its `<tool_code>` block is a tool call. */
  textProtocol?: boolean;
}

/**
 * One iteration's model call: the answer is accounted, appended exactly as returned (thinking
 * blocks included, unmodified, in order) and reported; a call that finally fails ends the run.
 */
export async function modelStep(c: StepContext): Promise<CallModelOutput | LoopExit> {
  const { state, conversation, emit } = c;
  emit({ kind: 'model_call_started', iteration: state.iteration + 1 });
  let response: CallModelOutput;
  try {
    response = await c.modelCalls.call(state.iteration + 1);
  } catch (err) {
    // Stopped by an interrupt or a cancel: however the activity reported its end, that is not a model failure.
    if (stopping(err)) throw err;
    emit({ kind: 'model_call_failed', iteration: state.iteration + 1, error: failureMessage(err) });
    return new LoopExit('failed', state.lastAssistantText, { type: failureType(err), message: failureMessage(err) });
  }
  state.iteration += 1;
  state.turnIterations += 1;
  c.tools.reportedLocalTools = new Set(response.localTools ?? []);
  if (response.sandboxWarning && response.sandboxWarning !== c.sandbox.warning) {
    c.sandbox.warning = response.sandboxWarning;
    emit({ kind: 'notice', message: `bash: ${c.sandbox.warning}` });
  }
  state.lastStopReason = response.stopReason;
  const callCost = c.account(response, true);
  conversation.append({ role: 'assistant', content: response.content });
  conversation.markSynced();
  const text = textOf(response.content);
  if (text) state.lastAssistantText = text;
  emit({
    kind: 'model_call_finished',
    iteration: state.iteration,
    stopReason: response.stopReason,
    usage: response.usage,
    costUsd: callCost,
    text: c.textProtocol ? replyProse(text) : text,
  });
  c.board.index();
  return response;
}

/** The closing summary at an iteration limit; a fixed text when it fails. */
export async function closingSummary(c: Pick<StepContext, 'modelCalls' | 'account' | 'emit'>): Promise<string> {
  try {
    const { text, response } = await c.modelCalls.summary(SUMMARY_INSTRUCTION, 'summary (max iterations)');
    c.account(response);
    return text.trim() || SUMMARY_FALLBACK_TEXT;
  } catch (err) {
    if (stopping(err)) throw err;
    c.emit({ kind: 'notice', message: `summary call failed: ${failureMessage(err)}` });
    return SUMMARY_FALLBACK_TEXT;
  }
}
