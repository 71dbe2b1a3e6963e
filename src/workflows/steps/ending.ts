import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  log,
  upsertMemo,
} from '@temporalio/workflow';
import {
  CANCELLED_ERROR,
  CANCELLED_RESULT_MEMO,
  ErrorTypes,
  MAX_CANCELLED_TEXT_BYTES,
  cutBytes,
  type AgentRunResult,
  type RunEventInput,
} from '../../shared';
import type { RunState } from '../run/run-state';
import type { StatusBoard } from '../run/status';
import type { LoopExit } from './turn';

interface EndingContext {
  state: RunState;
  board: StatusBoard;
  model: string;
  emit(event: RunEventInput): void;
  /** Runs with `outputSchema`: the parsed answer when the final text is the one that matched. */
  outputOf?(finalText: string): unknown;
  /** Records the messages no model call sent, so the transcript is whole. */
  keepFinalMessages(): Promise<void>;
}

/**
 * A Temporal cancel stopped the run: its end is written where operators look (state, events, search
 * attributes, Current Details), its `AgentRunResult` into its memo (a TypeScript workflow's cancel
 * carries no details; clients read it there), then the workflow ends Canceled by rethrowing the cancellation.
 */
export async function endCancelled(c: EndingContext, cancellation: unknown): Promise<never> {
  c.state.finalStatus = 'cancelled';
  c.emit({ kind: 'run_finished', exitReason: 'cancelled', finalText: c.state.lastAssistantText });
  c.board.index();
  await CancellationScope.nonCancellable(async () => {
    await condition(allHandlersFinished);
    await c.keepFinalMessages();
  });
  upsertMemo({ [CANCELLED_RESULT_MEMO]: cancelledResult(c) });
  throw cancellation;
}

/** What a cancelled run leaves: its usage, cost and the text it had (cut to fit the memo). */
export function cancelledResult(c: Pick<EndingContext, 'state' | 'model'>): AgentRunResult {
  return {
    exitReason: 'cancelled',
    finalText: cutBytes(c.state.lastAssistantText, MAX_CANCELLED_TEXT_BYTES),
    iterations: c.state.iteration,
    usage: c.state.usage,
    costUsd: c.state.costUsd,
    model: c.model,
    error: { type: CANCELLED_ERROR, message: 'cancelled by a Temporal client (workflow cancel)' },
  };
}

/**
 * The run's result. A run that ended `failed` is a failed workflow (non-retryable
 * `DurableAgent.RunFailed`, the result in its details), so Temporal's own status and filters tell
 * the truth; every other exit reason completes with the result.
 */
export async function endWith(c: EndingContext, exit: LoopExit): Promise<AgentRunResult> {
  c.state.finalStatus = exit.exitReason;
  c.emit({ kind: 'run_finished', exitReason: exit.exitReason, finalText: exit.finalText });
  c.board.index();
  await condition(allHandlersFinished);
  await c.keepFinalMessages();
  const output = c.outputOf?.(exit.finalText);
  const result: AgentRunResult = {
    exitReason: exit.exitReason,
    finalText: exit.finalText,
    iterations: c.state.iteration,
    usage: c.state.usage,
    costUsd: c.state.costUsd,
    model: c.model,
    ...(exit.error ? { error: exit.error } : {}),
    ...(output !== undefined ? { output } : {}),
  };
  // One line per finished run in the worker's log; a WARN when the iteration limit ended it.
  const line = {
    iterations: result.iterations,
    exitReason: result.exitReason,
    costUsd: result.costUsd,
    model: c.model,
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
