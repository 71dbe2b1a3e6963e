import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { PendingApproval } from '../../shared/run';
import {
  MAX_REPORTED_APPROVALS,
  MAX_REPORTED_RELEASES,
  MAX_REPORTED_RESOLUTIONS,
  subagentDecisionSignal,
  subagentGrantSignal,
  subagentReportSignal,
  subagentReserveSignal,
  type ResolvedApproval,
  type SubagentReport,
} from '../../shared/subagents';
import type { Approvals } from '../run/approvals';
import type { RunState } from '../run/run-state';
import type { UpstreamBudget } from './budget';

/**
 * A subagent's side of its tree: it tells its parent (by signal) which approvals wait in it, once per
 * change, so the parent's `pendingApprovals` stay current; it takes decisions its parent passes down
 * (`approveTool`/`denyTool` on the parent); and it says what its tree has spent:
 *
 * - live, once per change, only when the tree has a budget (`maxBudgetUsd`, which every run below a
 *   budgeted one has): the parent needs it to stop the tree in time;
 * - otherwise its result carries its spending, and the parent's history gets nothing per model call
 *   (a subagent adds the same few events to its parent however long it runs). A subagent that ends
 *   cancelled has no result its parent can read, so it sends one last report first (`settle`).
 *
 * Reports are cumulative: a repeated or late one adds nothing.
 */
export function reportToParent(p: {
  parentWorkflowId: string;
  workflowId: string;
  agent?: string;
  /** The tree has a budget: spending is reported as it happens. */
  live: boolean;
  state: RunState;
  approvals: Approvals;
}): { settle: () => Promise<void>; relay: (resolved: ResolvedApproval) => void; upstream: UpstreamBudget } {
  const { state, approvals } = p;
  const origin = { workflowId: p.workflowId, ...(p.agent ? { agent: p.agent } : {}) };
  /**
   * Decisions taken in this run's tree since the last report, however they were taken (on this run,
   * on a run below, passed down from above, or a timeout): the parent records each one it did not
   * decide itself, so a decision sent straight to a subagent is on record where the operator looks.
   */
  const resolved: ResolvedApproval[] = [];
  let resolutions = 0;
  const relay = (r: ResolvedApproval): void => {
    // Bounded while the parent is slow to take them: the oldest are dropped first.
    if (resolved.length >= MAX_REPORTED_RESOLUTIONS) resolved.shift();
    resolved.push(r);
    resolutions += 1;
  };
  approvals.onResolved = (a, d) =>
    relay({
      toolUseId: a.toolUseId,
      name: a.name,
      approved: d.approved,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      subagent: origin,
    });
  // The run id the parent started: what it checks every report against (it stays across continue-as-new).
  const runId = workflowInfo().firstExecutionRunId;
  const parent = getExternalWorkflowHandle(p.parentWorkflowId);
  let parentGone = false;
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
      .map((a) => (a.subagent ? a : { ...a, subagent: origin }));
  /**
   * The tree's budget, at the parent: each model call's reservation is asked for there and granted
   * (or refused) by signal; its release goes with the report that carries the call's spending.
   */
  const grants = new Map<string, (granted: string | undefined) => void>();
  const released: string[] = [];
  let asked = 0;
  let releases = 0;
  setHandler(subagentGrantSignal, (raw: unknown) => {
    const g = raw as { id?: unknown; granted?: unknown } | null;
    if (!g || typeof g !== 'object' || typeof g.id !== 'string') return;
    const done = grants.get(g.id);
    if (!done) return;
    grants.delete(g.id);
    done(g.granted === true ? g.id : undefined);
  });
  const upstream: UpstreamBudget = {
    reserve: (usd) =>
      new Promise((resolve, reject) => {
        const id = `${workflowInfo().runId}.${++asked}`;
        grants.set(id, resolve);
        // An interrupt or cancel of this run stops the wait for a grant, as it stops a model call.
        CancellationScope.current().cancelRequested.catch((err: unknown) => {
          if (grants.delete(id)) reject(err);
        });
        parent.signal(subagentReserveSignal, { workflowId: p.workflowId, runId, id, usd }).catch(() => {
          // Not sent (the parent has ended, or this run is stopping): no grant will come.
          if (grants.delete(id)) resolve(undefined);
        });
      }),
    release: (id) => {
      released.push(id);
      releases += 1;
    },
  };
  const spent = () => JSON.stringify([state.usage, state.costUsd]);
  const waiting = () => JSON.stringify(approvals.list().map((a) => a.toolUseId));
  const fingerprint = () => `${p.live ? spent() : ''}${waiting()}${resolutions}/${releases}`;
  let sent = fingerprint();
  const send = async (): Promise<void> => {
    const report: SubagentReport = {
      workflowId: p.workflowId,
      runId,
      usage: state.usage,
      costUsd: state.costUsd,
      pendingApprovals: pending(),
      ...(resolved.length ? { resolved: resolved.splice(0) } : {}),
      ...(released.length ? { released: released.splice(0, MAX_REPORTED_RELEASES) } : {}),
    };
    // More releases than one report carries: the loop sends another.
    if (released.length) releases += 1;
    try {
      await parent.signal(subagentReportSignal, report);
    } catch {
      parentGone = true; // the parent has ended: nobody to tell
    }
  };
  // Not cancellable: a cancelled subagent still reports what its last calls spent.
  void CancellationScope.nonCancellable(async () => {
    while (!parentGone) {
      await condition(() => fingerprint() !== sent);
      sent = fingerprint();
      await send();
    }
  }).catch(() => undefined);

  /**
   * At the run's end, before it closes: a cancelled subagent reports what its tree spent (in all its
   * executions), and waits until the parent has the signal (one sent with the run's last commands
   * could be lost). A run that ends any other way returns its spending in its result.
   */
  const settle = async () => {
    if (state.finalStatus !== 'cancelled' || parentGone) return;
    await CancellationScope.nonCancellable(send);
  };
  return { settle, relay, upstream };
}
