import { LoopExit } from './run/loop-exit';
import type { Run } from './run/run';
import { compactionDue, keepConversationSmall } from './steps/compaction';
import { endMessageAtLimit, messageBlocked, waitForInput } from './steps/finish';
import { handOver, shouldContinueAsNew } from './steps/hand-over';
import { takeMessages } from './steps/intake';
import { closingSummary, modelStep } from './steps/model-step';
import { startCannotWait, startNow, startRun } from './steps/start';
import { handleTurn } from './steps/turn';
import { expectedCallUsd, type TreeBudget } from './subagents';

/**
 * The agent loop (docs/architecture.md): model call → tool calls → tool results → model call …,
 * with the checks at every iteration boundary in this order: stop requests and the budget, the
 * messages sent meanwhile, the conversation's size, continue-as-new, the iteration limits.
 */
export async function agentLoop(run: Run): Promise<LoopExit> {
  const { state, hooks, settings } = run;
  const refused = await startRun(run);
  if (refused) return refused;
  // A session that handed over while waiting for input goes on waiting, until the same deadline.
  if (state.waitingUntil !== undefined) {
    const exit = await waitForInput(run, state.lastAssistantText, state.waitingUntil);
    if (exit) return exit;
  }
  for (;;) {
    if (state.interrupt) return LoopExit.interrupted(state.interrupt, state.lastAssistantText);
    if (hooks.stopRunRequested)
      return LoopExit.interrupted({ reason: hooks.stopRunRequested }, state.lastAssistantText);
    if (state.overBudget(run.input.maxBudgetUsd)) return new LoopExit('max_budget', state.lastAssistantText);
    // A new run starts with its first model call, unless something else comes first (steps/start.ts).
    if (run.startWith && startCannotWait(run)) {
      const exit = await startNow(run);
      if (exit) return exit;
    }
    // Messages join before the size check, so what they add is bounded with the rest. (The
    // synchronous checks before each `await` keep an iteration's promises few: docs/contributing.md,
    // "The hot path".)
    if (state.inbox.count > 0 && (await takeMessages(run)) === 'blocked') {
      const exit = await messageBlocked(run);
      if (exit) return exit;
      continue;
    }
    if (hooks.stopRunRequested)
      return LoopExit.interrupted({ reason: hooks.stopRunRequested }, state.lastAssistantText);
    // Compaction comes before continue-as-new: the conversation travels in its input.
    if (compactionDue(run) && (await keepConversationSmall(run)) === 'does_not_fit') {
      return new LoopExit('failed', state.lastAssistantText, {
        type: 'DurableAgent.ContextWindowExceeded',
        message: `the conversation does not fit the context window of ${settings.model} (${settings.contextWindow} tokens) even right after compaction`,
      });
    }
    if (shouldContinueAsNew(run.input.continueAsNewAfter, run.calledModel)) await handOver(run);
    const limit = state.limitReached({ ...settings, perMessage: settings.session });
    if (limit === 'run') return new LoopExit('max_iterations', await closingSummary(run));
    if (limit === 'message') {
      const exit = await endMessageAtLimit(run, await closingSummary(run));
      if (exit) return exit;
      continue;
    }
    const response = run.budget ? await budgetedStep(run, run.budget) : await modelStep(run);
    if (response instanceof LoopExit) return response;
    // Run start came back without an answer (steps/start.ts): the checks above, then the call.
    if (response === undefined) continue;
    const exit = await handleTurn(run, response);
    if (exit) return exit;
  }
}

/**
 * The model call of a run in a budgeted tree: admitted once its expected cost is reserved against the
 * tree's budget (subagents/budget.ts), refused (`max_budget`) when the budget has no room left. The
 * reservation ends once the call's spending is counted.
 */
async function budgetedStep(run: Run, budget: TreeBudget): ReturnType<typeof modelStep> {
  const { state, settings } = run;
  const held = await budget.admit(expectedCallUsd(state, settings.model, settings.maxTokens));
  if (!held) return new LoopExit('max_budget', state.lastAssistantText);
  try {
    return await modelStep(run);
  } finally {
    budget.release(held);
  }
}
