import { workflowInfo } from '@temporalio/workflow';
import type { RunContinuation, RunEventInput } from '../../shared/run';
import type { Approvals } from '../run/approvals';
import type { ModelCalls } from '../calls/model-calls';
import type { RunState } from '../run/run-state';
import { ownEntry, type ParsedInput } from '../run/settings';
import { TASK_TOOL_NAME } from '../../shared/subagents';
import { TreeBudget } from './budget';
import { inputDefinitions, loadWorkerDefinitions, mergeDefinitions } from './definitions';
import type { SubagentPlan } from './plan';
import { reportToParent } from './reporter';
import { SubagentTree } from './tree';

export { subagentPlan, type SubagentPlan } from './plan';
export { SubagentTree } from './tree';
export { TreeBudget, expectedCallUsd, type Reservation } from './budget';

/** A run's part in a tree: its subagents, and what it does before it closes (a subagent's last report). */
export interface TreeRole {
  tree: SubagentTree | undefined;
  /** A subagent's report to its parent before it closes; undefined for a run that is not a subagent. */
  settle: (() => Promise<void>) | undefined;
  /** The tree's budget, which each model call of the run reserves its expected cost against; undefined: no reservation. */
  budget: TreeBudget | undefined;
}

/**
 * The run's part in a tree of agents (docs/subagents.md): its subagents when it offers `task`, and
 * its reports to its parent when it is a subagent itself. Runs that are neither get nothing.
 */
export function joinTree(p: {
  input: ParsedInput;
  plan: SubagentPlan;
  model: string;
  state: RunState;
  approvals: Approvals;
  resume: RunContinuation | undefined;
  emit(event: RunEventInput): void;
  statusChanged(): void;
  workspace(): string | undefined;
}): TreeRole {
  const info = workflowInfo();
  // Only a subagent has a parent to report to and settle with; other runs end without the step (and its promise).
  let reporter: ReturnType<typeof reportToParent> | undefined;
  if (p.input.subagent && info.parent) {
    reporter = reportToParent({
      parentWorkflowId: info.parent.workflowId,
      workflowId: info.workflowId,
      ...(p.input.subagent.agent !== undefined ? { agent: p.input.subagent.agent } : {}),
      // Every run below a budgeted one has a budget (what the tree had left when it started).
      live: p.input.maxBudgetUsd !== undefined,
      state: p.state,
      approvals: p.approvals,
    });
  }
  // The tree's budget, where a call may have to wait for room: a budgeted run that has subagents or
  // is one (its parent holds the rest of the tree's budget).
  const budget =
    p.input.maxBudgetUsd !== undefined && (p.plan.offersTask || reporter)
      ? new TreeBudget(p.input.maxBudgetUsd, p.state, reporter?.upstream)
      : undefined;
  const tree = p.plan.offersTask
    ? new SubagentTree(
        {
          workflowId: info.workflowId,
          input: p.input,
          plan: p.plan,
          model: p.model,
          state: p.state,
          emit: p.emit,
          statusChanged: p.statusChanged,
          workspace: p.workspace,
          denied: ownEntry(p.input.permissions, TASK_TOOL_NAME) === 'deny',
          // Up to this run's parent, when it is a subagent itself.
          resolvedBelow: (resolved) => reporter?.relay(resolved),
          budget,
        },
        p.resume?.taskCount,
      )
    : undefined;
  if (tree) p.approvals.linkRemote(tree);
  return { tree, settle: reporter?.settle, budget };
}

/** At each execution's start: the agents the run may name (input's and the worker's), offered to the model. */
export async function offerTask(
  tree: SubagentTree,
  p: {
    input: ParsedInput;
    workspace: string | undefined;
    modelCalls: ModelCalls;
    emit(event: RunEventInput): void;
  },
): Promise<void> {
  const loaded = await loadWorkerDefinitions(p.workspace, (message) => p.emit({ kind: 'notice', message }));
  tree.useDefinitions(mergeDefinitions(inputDefinitions(p.input.agents), loaded));
  p.modelCalls.useWorkflowTools([tree.spec()]);
}
