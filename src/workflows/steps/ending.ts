import { ApplicationFailure, CancellationScope, condition, log, upsertMemo } from '@temporalio/workflow';
import { cutBytes } from '../../shared/bounds';
import { CANCELLED_ERROR, CANCELLED_RESULT_MEMO, MAX_CANCELLED_TEXT_BYTES } from '../../shared/cancelled-result';
import { ErrorTypes } from '../../shared/constants';
import type { AgentRunResult } from '../../shared/run';
import { keepFinalMessages } from '../calls/final-messages';
import type { LoopExit } from '../run/loop-exit';
import { inputSettled } from '../sdk/input-order';
import type { Run } from '../run/run';

/**
 * A Temporal cancel stopped the run: its end is written where operators look (state, events, search
 * attributes, Current Details), its `AgentRunResult` into its memo (a TypeScript workflow's cancel
 * carries no details; clients read it there), then the workflow ends Canceled by rethrowing the cancellation.
 */
export async function endCancelled(run: Run, cancellation: unknown): Promise<never> {
  run.state.finalStatus = 'cancelled';
  run.emit({ kind: 'run_finished', exitReason: 'cancelled', finalText: run.state.lastAssistantText });
  run.board.index();
  await CancellationScope.nonCancellable(async () => {
    await closingSteps(run);
  });
  upsertMemo({ [CANCELLED_RESULT_MEMO]: cancelledResult(run) });
  throw cancellation;
}

/**
 * Before a run closes: its handlers finish, the messages no model call sent are recorded (unless a
 * closing summary's input holds them), and a subagent's spending reaches its parent
 * (docs/subagents.md). Each step is taken only when there is something to do: a step that awaits
 * nothing still costs promises (docs/contributing.md, "The hot path").
 * The handlers' wait is skipped only in a scope that is not cancelled: there `condition` rejects at
 * once, which is how a run whose workflow was cancelled meanwhile ends Canceled, as it always has.
 */
async function closingSteps(run: Run): Promise<void> {
  if (!inputSettled() || CancellationScope.current().consideredCancelled) {
    await condition(inputSettled);
  }
  // Since 0.2.1, not when a closing summary's recorded input holds them (docs/upgrading.md).
  if (!run.state.conversation.allRecorded) await keepFinalMessages(run.state.conversation);
  if (run.settleTree) await run.settleTree();
}

/** What a cancelled run leaves: its usage, cost and the text it had (cut to fit the memo). */
function cancelledResult(run: Run): AgentRunResult {
  return {
    exitReason: 'cancelled',
    finalText: cutBytes(run.state.lastAssistantText, MAX_CANCELLED_TEXT_BYTES),
    iterations: run.state.iteration,
    usage: run.state.usage,
    costUsd: run.state.costUsd,
    model: run.settings.model,
    error: { type: CANCELLED_ERROR, message: 'cancelled by a Temporal client (workflow cancel)' },
  };
}

/**
 * The run's result. A run that ended `failed` is a failed workflow (non-retryable
 * `DurableAgent.RunFailed`, the result in its details), so Temporal's own status and filters tell
 * the truth; every other exit reason completes with the result.
 */
export async function endWith(run: Run, exit: LoopExit): Promise<AgentRunResult> {
  run.state.finalStatus = exit.exitReason;
  run.emit({ kind: 'run_finished', exitReason: exit.exitReason, finalText: exit.finalText });
  run.board.index();
  await closingSteps(run);
  // Runs with `outputSchema`: the parsed answer when the final text is the one that matched.
  const output = run.answers?.outputFor(exit.finalText);
  const result: AgentRunResult = {
    exitReason: exit.exitReason,
    finalText: exit.finalText,
    iterations: run.state.iteration,
    usage: run.state.usage,
    costUsd: run.state.costUsd,
    model: run.settings.model,
    ...(exit.error ? { error: exit.error } : {}),
    ...(output !== undefined ? { output } : {}),
  };
  // One line per finished run in the worker's log; a WARN when the iteration limit ended it.
  const line = {
    iterations: result.iterations,
    exitReason: result.exitReason,
    costUsd: result.costUsd,
    model: run.settings.model,
  };
  if (exit.exitReason === 'max_iterations') log.warn('run reached maxIterations', line);
  log.info('run finished', line);
  if (exit.exitReason === 'failed') {
    throw ApplicationFailure.create({
      message: `the run failed: ${exit.error?.message ?? 'unknown cause'}`,
      type: ErrorTypes.RunFailed,
      nonRetryable: true,
      details: [result],
    });
  }
  return result;
}
