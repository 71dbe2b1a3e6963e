import type { CallModelOutput, FirstModelCallOutput } from '../../shared/activity-io';
import { SUMMARY_FALLBACK_TEXT, SUMMARY_INSTRUCTION } from '../../shared/constants';
import { textOf } from '../../shared/messages';
import { replyProse } from '../../shared/text-protocol';
import { failureMessage, failureType, stopping } from '../calls/failures';
import { LoopExit, type Next } from '../run/loop-exit';
import type { Run } from '../run/run';
import { expectedCallUsd, type TreeBudget } from '../subagents';
import { startedBy } from './start';

/**
 * One iteration's model call: the answer is accounted, appended exactly as returned (thinking
 * blocks included, unmodified, in order) and reported, and waits for the turn step (`run.pendingTurn`);
 * a call that finally fails ends the run. In a budgeted tree the call is admitted once its expected
 * cost is reserved against the tree's budget (subagents/budget.ts), and refused (`max_budget`) when
 * the budget has no room left; the reservation ends once the call's spending is counted.
 */
export function modelStep(run: Run): Promise<Next> {
  return run.budget ? budgetedCall(run, run.budget) : callModel(run);
}

async function budgetedCall(run: Run, budget: TreeBudget): Promise<Next> {
  const { state, settings } = run;
  const held = await budget.admit(expectedCallUsd(state, settings.model, settings.maxTokens));
  if (!held) return new LoopExit('max_budget', state.lastAssistantText);
  try {
    return await callModel(run);
  } finally {
    budget.release(held);
  }
}

async function callModel(run: Run): Promise<Next> {
  // A new run's first call carries its start.
  if (run.startWith) return firstCall(run);
  run.announceCall();
  let response: CallModelOutput;
  try {
    response = await run.modelCalls.call(run.state.iteration + 1);
  } catch (err) {
    return callFailed(run, err);
  }
  return answered(run, response);
}

/**
 * The first model call with the run's start (steps/start.ts). 'again': the worker prepared the run but
 * left the call to the workflow (UserPromptSubmit hooks screened the prompt, MCP tools were taken); the
 * loop goes round once more, so its checks (an interrupt, a hook's request to stop, a message) come
 * before the call, as they do before every call.
 */
async function firstCall(run: Run): Promise<Next> {
  const prepare = run.startWith!;
  run.startWith = undefined;
  run.announceCall();
  let outcome: FirstModelCallOutput;
  try {
    outcome = await run.modelCalls.first(run.state.iteration + 1, prepare);
  } catch (err) {
    return callFailed(run, err);
  }
  const exit = await startedBy(run, outcome);
  if (exit) return exit;
  // The worker answers only when nothing had to come first (it read the same hooks: src/activities/first-call.ts).
  return outcome.response === undefined ? 'again' : answered(run, outcome.response);
}

function callFailed(run: Run, err: unknown): LoopExit {
  const { state } = run;
  // Stopped by an interrupt or a cancel: however the activity reported its end, that is not a model failure.
  if (stopping(err)) throw err;
  run.emit({ kind: 'model_call_failed', iteration: state.iteration + 1, error: failureMessage(err) });
  return new LoopExit('failed', state.lastAssistantText, { type: failureType(err), message: failureMessage(err) });
}

function answered(run: Run, response: CallModelOutput): 'go_on' {
  const { state, emit } = run;
  const { conversation } = state;
  run.modelCalls.noteAnswer(response);
  run.calledModel = true;
  state.iteration += 1;
  state.turnIterations += 1;
  run.toolCalls.reportedLocalTools = new Set(response.localTools ?? []);
  if (response.sandboxWarning && response.sandboxWarning !== run.sandboxWarning) {
    run.sandboxWarning = response.sandboxWarning;
    emit({ kind: 'notice', message: `bash: ${run.sandboxWarning}` });
  }
  state.lastStopReason = response.stopReason;
  const callCost = run.account(response, true);
  conversation.append({ role: 'assistant', content: response.content });
  conversation.markSynced();
  const text = textOf(response.content);
  // Under the text protocol a reply's own words are its prose: its `<tool_code>` block is a tool
  // call, so an interrupted or out-of-budget run never ends with raw XML as its final text.
  const words = run.settings.textTools ? replyProse(text) : text;
  if (words) state.lastAssistantText = words;
  emit({
    kind: 'model_call_finished',
    iteration: state.iteration,
    stopReason: response.stopReason,
    usage: response.usage,
    costUsd: callCost,
    text: words,
  });
  run.board.index();
  run.pendingTurn = response;
  return 'go_on';
}

/**
 * The closing summary at an iteration limit; a fixed text when it fails, or when its result cannot be
 * read or accounted.
 */
export async function closingSummary(run: Run): Promise<string> {
  const { conversation } = run.state;
  const sent = conversation.length;
  try {
    const { text, response } = await run.modelCalls.summary(SUMMARY_INSTRUCTION, 'summary (max iterations)');
    // Its input, in history now, holds the conversation: the run's end need not record it again.
    conversation.markRecorded(sent);
    run.account(response);
    return text.trim() || SUMMARY_FALLBACK_TEXT;
  } catch (err) {
    if (stopping(err)) throw err;
    run.emit({ kind: 'notice', message: `summary call failed: ${failureMessage(err)}` });
    return SUMMARY_FALLBACK_TEXT;
  }
}
