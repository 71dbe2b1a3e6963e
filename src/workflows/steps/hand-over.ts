import { condition, makeContinueAsNewFunc, workflowInfo } from '@temporalio/workflow';
import type { AgentRunInput } from '../../shared/run/input';
import type { AgentRunResult } from '../../shared/run/result';
import { inputSettled } from '../sdk/input-order';
import type { Run } from '../run/run';
import { CONTINUED_STATUS } from '../run/status';

/** The agent's workflow function's type (agent-workflow.ts), written here so steps do not import the workflow. */
type AgentWorkflow = (input: AgentRunInput) => Promise<AgentRunResult>;

/**
 * Temporal suggests a hand-over: the history grew large, or a newer Worker Deployment Version became
 * the target of this pinned run (it moves there by continuing as new; docs/upgrading.md).
 */
export function handOverSuggested(): boolean {
  const now = workflowInfo();
  return now.continueAsNewSuggested || now.targetWorkerDeploymentVersionChanged;
}

/**
 * The run continues as new when Temporal suggests it or when the run's own limits say so. The
 * run's own limits count only once this execution has called the model (`called`): an execution
 * starts with the run's input and carried state in its history, and a run whose prompt alone
 * passed `continueAsNewAfter.bytes` handed over at once in every execution, forever (0.3.0).
 */
export function shouldContinueAsNew(limits: AgentRunInput['continueAsNewAfter'], called: boolean): boolean {
  if (handOverSuggested()) return true;
  if (!called || limits === undefined) return false;
  const now = workflowInfo();
  return (
    (limits.events !== undefined && now.historyLength >= limits.events) ||
    (limits.bytes !== undefined && now.historySize >= limits.bytes)
  );
}

/**
 * Hands the run to a fresh execution, so history stays small (docs/architecture.md#history-stays-linear).
 * The next execution gets the same input and the run's snapshot (`Run.snapshot`). `waiting`: a
 * session hands over while it waits for input, until that deadline.
 */
export async function handOver(run: Run, waiting?: { idleDeadline: number }): Promise<never> {
  const { state, board } = run;
  state.continuations += 1;
  run.emit({
    kind: 'notice',
    message: `continuing as new (execution ${state.continuations + 1}) to keep history small`,
  });
  // A message (or an interrupt) that came with the result that led here is taken first (sdk/input-order.ts).
  await condition(inputSettled);
  const carried = run.snapshot(waiting);
  // This execution stops here: its attributes say `continued`; the next one starts `running`.
  board.index(CONTINUED_STATUS);
  const next = makeContinueAsNewFunc<AgentWorkflow>({
    typedSearchAttributes: board.continuationAttributes(waiting ? 'awaiting_input' : 'running'),
    // Every hand-over is an upgrade point: the next execution starts on the deployment's current
    // version (pinned there in turn), reading only the carried input (docs/upgrading.md).
    initialVersioningBehavior: 'AUTO_UPGRADE',
  });
  return next({ ...run.rawInput, resume: carried });
}
