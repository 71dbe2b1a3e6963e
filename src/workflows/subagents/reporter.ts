import { CancellationScope, condition, getExternalWorkflowHandle, setHandler } from '@temporalio/workflow';
import type { PendingApproval } from '../../shared/run';
import {
  MAX_REPORTED_APPROVALS,
  subagentDecisionSignal,
  subagentReportSignal,
  type SubagentReport,
} from '../../shared/subagents';
import type { Approvals } from '../run/approvals';
import type { RunState } from '../run/run-state';

/**
 * A subagent's side of its tree: it tells its parent (by signal) what its tree has spent and which
 * approvals wait in it, once per change, so the parent's totals, budget and `pendingApprovals` stay
 * current; and it takes decisions its parent passes down (`approveTool`/`denyTool` on the parent).
 */
export function reportToParent(p: {
  parentWorkflowId: string;
  workflowId: string;
  agent?: string;
  state: RunState;
  approvals: Approvals;
}): void {
  const { state, approvals } = p;
  setHandler(subagentDecisionSignal, (raw: unknown) => {
    const d = raw as { toolUseId?: unknown; approved?: unknown; reason?: unknown } | null;
    if (!d || typeof d !== 'object' || typeof d.toolUseId !== 'string' || typeof d.approved !== 'boolean') return;
    const arg = { toolUseId: d.toolUseId, ...(typeof d.reason === 'string' ? { reason: d.reason } : {}) };
    try {
      approvals.validate(arg);
    } catch {
      return; // decided already, timed out, or never waited here: nothing to do
    }
    void Promise.resolve(approvals.decide(arg, d.approved)).catch(() => undefined);
  });

  const pending = (): PendingApproval[] =>
    approvals
      .list()
      .slice(0, MAX_REPORTED_APPROVALS)
      .map((a) =>
        a.subagent ? a : { ...a, subagent: { workflowId: p.workflowId, ...(p.agent ? { agent: p.agent } : {}) } },
      );
  const report = (): SubagentReport => ({
    workflowId: p.workflowId,
    usage: state.usage,
    costUsd: state.costUsd,
    pendingApprovals: pending(),
  });
  const fingerprint = () => JSON.stringify([state.usage, state.costUsd, approvals.list().map((a) => a.toolUseId)]);
  const parent = getExternalWorkflowHandle(p.parentWorkflowId);
  let sent = fingerprint();
  // Not cancellable: a cancelled subagent still reports what its last calls spent.
  void CancellationScope.nonCancellable(async () => {
    for (;;) {
      await condition(() => fingerprint() !== sent);
      sent = fingerprint();
      try {
        await parent.signal(subagentReportSignal, report());
      } catch {
        return; // the parent has ended: nobody to tell
      }
    }
  }).catch(() => undefined);
}
