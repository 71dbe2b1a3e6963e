import { condition, log, workflowInfo } from '@temporalio/workflow';
import { LoopExit } from '../run/loop-exit';
import type { Run } from '../run/run';
import { handOver, handOverSuggested } from './hand-over';

/*
 * How a turn ends: the model answered (a Stop hook may keep it going, `outputSchema` may ask for a
 * correction), a plain run ends, a session waits for its next message.
 */

/**
 * The model answered. A Stop hook may keep it going; a plain run ends; a session waits for the
 * next message, `endSession`, or the idle timeout. Messages sent meanwhile are taken first either way.
 */
export async function finishTurn(run: Run, text: string, stopHooks = true): Promise<LoopExit | undefined> {
  const { state, hooks, emit } = run;
  if (stopHooks && state.inbox.count === 0) {
    const keepGoing = await hooks.stopping();
    if (keepGoing !== undefined) {
      // Not the answer after all: narrated like any other turn's text.
      emit({ kind: 'text', iteration: state.iteration, text });
      state.conversation.append({ role: 'user', content: `[Stop hook] ${keepGoing}` });
      return undefined;
    }
  }
  if (stopHooks && run.answers) {
    const verdict = await run.answers.check(text);
    if (verdict.kind === 'invalid') return verdict.exit;
    text = verdict.text;
  }
  emit({ kind: 'answer', text });
  const stop = run.stopRequested();
  if (stop) return LoopExit.interrupted(stop, text);
  if (state.inbox.count > 0) {
    nextMessage(run);
    return undefined;
  }
  if (!run.settings.session) return new LoopExit('completed', text);
  emit({ kind: 'awaiting_input' });
  return waitForInput(run, text, Date.now() + run.settings.sessionIdleMs);
}

/**
 * The message's turn reached `maxIterations` in a session: the closing summary is this message's
 * answer, and the session waits for the next one (in a session the iteration limit counts per message).
 */
export async function endMessageAtLimit(run: Run, summary: string): Promise<LoopExit | undefined> {
  const { state } = run;
  const { maxIterations } = run.settings;
  log.warn('run reached maxIterations for a message; answering with a summary', {
    workflowId: workflowInfo().workflowId,
    maxIterations,
    iteration: state.iteration,
  });
  run.emit({
    kind: 'notice',
    message: `this message's turn reached maxIterations (${maxIterations}); answered with a summary`,
  });
  state.conversation.append({ role: 'assistant', content: [{ type: 'text', text: summary }] });
  state.lastAssistantText = summary;
  return finishTurn(run, summary, false);
}

/** A hook blocked the messages that would have begun a turn: a session waits again, a run ends. */
export async function messageBlocked(run: Run): Promise<LoopExit | undefined> {
  const text = run.state.lastAssistantText;
  if (!run.settings.session) return new LoopExit('completed', text);
  run.emit({ kind: 'awaiting_input' });
  return waitForInput(run, text, Date.now() + run.settings.sessionIdleMs);
}

/** A session's next message begins a new turn: its iteration count starts again. */
function nextMessage(run: Run): void {
  if (run.settings.session) run.state.turnIterations = 0;
}

/**
 * A session waits for input until `idleDeadline`. Its history can still grow meanwhile (every
 * signal a client sends is recorded), so when Temporal suggests continuing as new, it hands over
 * still waiting instead of running into the history limit; the next execution waits on.
 */
export async function waitForInput(run: Run, text: string, idleDeadline: number): Promise<LoopExit | undefined> {
  const { state } = run;
  const { inbox } = state;
  state.awaitingInput = true;
  run.board.index();
  const remaining = idleDeadline - Date.now();
  const woken =
    remaining > 0 &&
    (await condition(
      () => inbox.count > 0 || state.endRequested || handOverSuggested() || run.stopRequested() !== undefined,
      remaining,
    ));
  state.awaitingInput = false;
  const stop = run.stopRequested();
  if (stop) return LoopExit.interrupted(stop, text);
  if (!woken || (state.endRequested && inbox.count === 0)) return new LoopExit('completed', text);
  if (inbox.count === 0 && handOverSuggested()) await handOver(run, { idleDeadline });
  nextMessage(run);
  return undefined;
}
