import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  isCancellation,
  setHandler,
  startChild,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import { WORKFLOW_TYPE } from '../../shared/constants';
import { cutBytes, cutChars } from '../../shared/bounds';
import { toolResultBlock } from '../../shared/conversation';
import type { ToolResultBlock, ToolSpec, ToolUseBlock } from '../../shared/messages';
import type { AgentRunResult, ExitReason, PendingApproval, RunEventInput } from '../../shared/run';
import {
  TASK_TOOL_NAME,
  subagentDecisionSignal,
  subagentGrantSignal,
  subagentReportSignal,
  subagentReserveSignal,
  type AgentDefinition,
  type ResolvedApproval,
  type SubagentDecision,
  type SubagentSummary,
} from '../../shared/subagents';
import type { RemoteApprovals } from '../run/approvals';
import { failureMessage } from '../calls/failures';
import type { RunState } from '../run/run-state';
import { ownEntry, type ParsedInput } from '../run/settings';
import { childDetails, childInput, childSummary } from './child-input';
import type { SubagentPlan } from './plan';
import { NO_SPEND, addTreeSpend, approvalsOf, releasesOf, resolutionsOf, spendOf, type Spend } from './spend';
import type { Reservation, TreeBudget } from './budget';
import { answerBlock, resultOf } from './outcome';
import { admitTask, afterTask, type TaskGate } from './task-hooks';
import { parseTaskCall, taskToolSpec } from './task-tool';

/** Decisions passed down and not yet confirmed by the child's report: far more than operators decide at once. */
const MAX_FORWARDED = 1_000;
/** A reservation larger than this is taken as this: far above any one call. */
const MAX_RESERVATION_USD = 1_000;

export interface TreeContext {
  workflowId: string;
  input: ParsedInput;
  plan: SubagentPlan;
  model: string;
  state: RunState;
  emit(event: RunEventInput): void;
  /** Status changed outside the loop (a report, an approval below): write it where operators look. */
  statusChanged(): void;
  /** The workspace's real path once run start recorded it. */
  workspace(): string | undefined;
  /** `permissions.task === 'deny'` refuses every task call. */
  denied: boolean;
  /** A decision on an approval below this run, recorded here: a subagent passes it on to its own parent. */
  resolvedBelow(resolved: ResolvedApproval): void;
  /** The tree's budget as this run holds it (runs with `maxBudgetUsd`): subagents reserve each call here. */
  budget: TreeBudget | undefined;
}

interface Running {
  workflowId: string;
  toolUseId: string;
  agent?: string;
  description?: string;
  scope: CancellationScope;
  handle?: ChildWorkflowHandle<() => Promise<AgentRunResult>>;
  /** The started child's first run id: only reports that carry it are the child's. */
  runId?: string;
  reported: Spend;
  approvals: PendingApproval[];
  /** Budget reservations of its calls (and its subagents'), by the id it asked with, until its report releases them. */
  reservations: Map<string, Reservation>;
  /** Why the parent stopped it, when it did. */
  stopped?: string;
}

/**
 * The subagents of one run (docs/subagents.md): `task` calls start child `agentWorkflow`s, their
 * spending joins this run's totals (their result when they end; reports while they run when the tree
 * has a budget, and a cancelled one's last report), the budget stops the whole tree, and their
 * pending approvals are decided through this run.
 */
export class SubagentTree implements RemoteApprovals {
  /** `task` calls so far (carried across continue-as-new): child ids never repeat within a run. */
  taskCount: number;
  private definitions: AgentDefinition[] = [];
  private readonly running = new Map<string, Running>();
  /**
   * Children that have ended, for a report that is handled after the child's end: a cancelled child
   * reports its spending and then ends, and when both reach this run in one activation the end is
   * taken first (signals come last: sdk/input-order.ts).
   */
  private readonly ended = new Map<string, Running>();
  /**
   * Calls decided here and passed down (`tool_use id`), recorded when decided: the child's report of
   * the same decision is not recorded twice. Bounded: an entry leaves when that report comes.
   */
  private readonly forwarded = new Set<string>();

  constructor(
    private readonly c: TreeContext,
    carriedTaskCount: number | undefined,
  ) {
    this.taskCount = carriedTaskCount ?? 0;
    setHandler(subagentReportSignal, (raw: unknown) => this.onReport(raw));
    setHandler(subagentReserveSignal, (raw: unknown) => this.onReserve(raw));
  }

  useDefinitions(definitions: AgentDefinition[]): void {
    this.definitions = definitions;
  }

  spec(): ToolSpec {
    return taskToolSpec(this.definitions);
  }

  summaries(): SubagentSummary[] {
    return [...this.running.values()].map((r) => ({
      workflowId: r.workflowId,
      toolUseId: r.toolUseId,
      ...(r.agent !== undefined ? { agent: r.agent } : {}),
      ...(r.description !== undefined ? { description: r.description } : {}),
    }));
  }

  list(): PendingApproval[] {
    return [...this.running.values()].flatMap((r) => r.approvals);
  }

  has(toolUseId: string): boolean {
    return this.childWaitingFor(toolUseId) !== undefined;
  }

  /** Passes a decision down to the subagent the call waits in (or the one above it). */
  async forward(decision: SubagentDecision): Promise<string> {
    const child = this.childWaitingFor(decision.toolUseId);
    if (!child?.handle) return '';
    const approval = child.approvals.find((a) => a.toolUseId === decision.toolUseId);
    const name = approval?.name ?? '';
    // Decided once: the call leaves this run's list now; the child's next report confirms it.
    child.approvals = child.approvals.filter((a) => a.toolUseId !== decision.toolUseId);
    const resolved: ResolvedApproval = {
      toolUseId: decision.toolUseId,
      name,
      approved: decision.approved,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      subagent: approval?.subagent ?? { workflowId: child.workflowId },
    };
    this.record(resolved);
    if (this.forwarded.size < MAX_FORWARDED) this.forwarded.add(decision.toolUseId);
    this.c.statusChanged();
    await child.handle.signal(subagentDecisionSignal, decision);
    return name;
  }

  carried(): { taskCount?: number } {
    return this.taskCount > 0 ? { taskCount: this.taskCount } : {};
  }

  /** Runs one `task` call to its end; every outcome but this run's own stop is a tool result. */
  async run(toolUse: ToolUseBlock, gate: TaskGate = {}): Promise<ToolResultBlock> {
    const { c } = this;
    if (c.denied) return this.refuse(toolUse, "Error: the operator's policy does not allow tool 'task' in this run.");
    const admitted = await admitTask(toolUse, gate, ownEntry(c.input.permissions, TASK_TOOL_NAME));
    if ('refused' in admitted) return this.refuse(toolUse, admitted.refused);
    const call = parseTaskCall(admitted.call.input);
    if (typeof call === 'string') return this.refuse(toolUse, call);
    const definition = call.agent !== undefined ? this.definitions.find((d) => d.name === call.agent) : undefined;
    if (call.agent !== undefined && !definition) {
      const names = this.definitions.map((d) => d.name);
      return this.refuse(
        toolUse,
        `Error: unknown agent '${call.agent}'. Available agents: ${names.length ? names.join(', ') : '(none)'}; ` +
          'omit "agent" for a general-purpose subagent.',
      );
    }
    const budget = c.input.maxBudgetUsd;
    if (c.state.overBudget(budget)) {
      return this.refuse(toolUse, "Error: not run: the run's budget (maxBudgetUsd) is spent.");
    }
    const remaining = budget !== undefined && c.state.costUsd !== null ? budget - c.state.costUsd : budget;
    const workflowId = `${c.workflowId}.task-${++this.taskCount}`;
    const input = childInput({
      parent: c.input,
      plan: c.plan,
      workspace: c.workspace(),
      model: c.model,
      call,
      ...(definition ? { definition } : {}),
      ...(remaining !== undefined ? { remainingBudgetUsd: remaining } : {}),
      toolUseId: toolUse.id,
      parentWorkflowId: c.workflowId,
    });
    const running: Running = {
      workflowId,
      toolUseId: toolUse.id,
      ...(definition ? { agent: definition.name } : {}),
      ...(call.description !== undefined ? { description: call.description } : {}),
      scope: new CancellationScope(),
      reported: NO_SPEND,
      approvals: [],
      reservations: new Map(),
    };
    this.running.set(workflowId, running);
    c.state.activeTools.set(toolUse.id, toolUse.name);
    c.emit({ kind: 'tool_call_started', toolUseId: toolUse.id, name: toolUse.name, input: admitted.call.input });
    c.emit({
      kind: 'subagent_started',
      toolUseId: toolUse.id,
      workflowId,
      ...(running.agent !== undefined ? { agent: running.agent } : {}),
      ...(running.description !== undefined ? { description: running.description } : {}),
      depth: c.plan.depth + 1,
    });
    let outcome: { result?: AgentRunResult; error?: unknown };
    try {
      outcome = {
        result: await running.scope.run(async () => {
          const handle = await startChild<() => Promise<AgentRunResult>>(WORKFLOW_TYPE, {
            workflowId,
            args: [input] as never,
            // The child learns of the parent's end and records its own (cancelled), instead of vanishing.
            parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
            cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
            staticSummary: childSummary(call, running.agent),
            staticDetails: childDetails({
              parentWorkflowId: c.workflowId,
              depth: c.plan.depth + 1,
              ...(running.agent !== undefined ? { agent: running.agent } : {}),
              tools: input.tools,
              ...(input.maxBudgetUsd !== undefined ? { maxBudgetUsd: input.maxBudgetUsd } : {}),
              prompt: call.prompt,
            }),
          });
          running.handle = handle;
          running.runId = handle.firstExecutionRunId;
          return handle.result();
        }),
      };
    } catch (err) {
      outcome = { error: err };
    } finally {
      this.running.delete(workflowId);
      this.ended.set(workflowId, running);
      c.state.activeTools.delete(toolUse.id);
    }
    const final = outcome.result ?? resultOf(outcome.error);
    if (final) running.reported = addTreeSpend(c.state, running.reported, final);
    // Its calls have ended; their spending is counted (a cancelled child's comes with its last report).
    for (const held of running.reservations.values()) c.budget?.release(held);
    running.reservations.clear();
    if (c.state.overBudget(c.input.maxBudgetUsd)) this.stopAll("the run's budget (maxBudgetUsd) is spent");
    const exitReason: ExitReason =
      final?.exitReason ?? (running.stopped || isCancellation(outcome.error) ? 'cancelled' : 'failed');
    c.emit({
      kind: 'subagent_finished',
      toolUseId: toolUse.id,
      workflowId,
      exitReason,
      usage: running.reported.usage,
      costUsd: running.reported.costUsd,
    });
    c.statusChanged();
    // This run is stopping (interrupt, cancel): the child has ended too; the stop goes on up.
    if (outcome.error !== undefined && CancellationScope.current().consideredCancelled) throw outcome.error;
    const block = await afterTask(
      gate,
      admitted,
      outcome.result
        ? answerBlock(toolUse.id, workflowId, outcome.result)
        : toolResultBlock(toolUse.id, this.failureText(workflowId, running, outcome.error, final), true),
    );
    c.emit({
      kind: 'tool_call_finished',
      toolUseId: toolUse.id,
      name: toolUse.name,
      isError: block.is_error === true,
      preview: block.content.slice(0, 200),
    });
    return block;
  }

  private failureText(workflowId: string, r: Running, err: unknown, result: AgentRunResult | undefined): string {
    if (r.stopped) return `Error: subagent ${workflowId} was stopped: ${r.stopped}. Its work so far is lost.`;
    if (result) {
      return (
        `Error: subagent ${workflowId} ended '${result.exitReason}'` +
        `${result.error ? `: ${cutChars(result.error.message, 2_000)}` : ''}` +
        (result.finalText ? `\nIts last text:\n${cutBytes(result.finalText, 4_000)}` : '')
      );
    }
    return `Error: subagent ${workflowId} did not finish: ${cutChars(failureMessage(err), 2_000)}`;
  }

  private refuse(toolUse: ToolUseBlock, content: string): ToolResultBlock {
    this.c.emit({
      kind: 'tool_call_finished',
      toolUseId: toolUse.id,
      name: toolUse.name,
      isError: true,
      preview: content,
    });
    return toolResultBlock(toolUse.id, content, true);
  }

  private childWaitingFor(toolUseId: string): Running | undefined {
    for (const r of this.running.values()) if (r.approvals.some((a) => a.toolUseId === toolUseId)) return r;
    return undefined;
  }

  /**
   * A child's report: its tree's spending so far, its pending approvals and the decisions taken in
   * it. Only the children this run started may report, each with its own run id: anyone may signal
   * a run, and a forged report would change what the operator is asked to approve. Anything else is
   * ignored.
   */
  private onReport(raw: unknown): void {
    const r = raw && typeof raw === 'object' ? (raw as { workflowId?: unknown; runId?: unknown }) : undefined;
    const from = r?.workflowId;
    if (typeof from !== 'string') return;
    // A report handled after its child's end still counts (its spending once: the report adds what
    // the end did not); its approvals are over.
    const child = this.running.get(from) ?? this.ended.get(from);
    if (!child || child.runId === undefined || r?.runId !== child.runId) {
      this.c.emit({
        kind: 'notice',
        message: `ignored a subagent report that claims to come from '${cutChars(String(from), 100)}': not from a subagent this run started`,
      });
      return;
    }
    for (const resolved of resolutionsOf((raw as { resolved?: unknown }).resolved, child.workflowId)) {
      // Decided here and passed down: recorded already.
      if (!this.forwarded.delete(resolved.toolUseId)) this.record(resolved);
    }
    const spend = spendOf(raw);
    if (spend) child.reported = addTreeSpend(this.c.state, child.reported, spend);
    // After the spending: the calls these reservations held room for are counted now.
    for (const id of releasesOf((raw as { released?: unknown }).released)) {
      this.c.budget?.release(child.reservations.get(id));
      child.reservations.delete(id);
    }
    if (this.running.has(from)) {
      child.approvals = approvalsOf((raw as { pendingApprovals?: unknown }).pendingApprovals, child.workflowId);
    }
    this.c.statusChanged();
    if (this.c.state.overBudget(this.c.input.maxBudgetUsd)) this.stopAll("the run's budget (maxBudgetUsd) is spent");
  }

  /**
   * A subagent asks for room for a model call's expected cost: granted once the tree's budget has it
   * (which may mean waiting for other calls to end), refused when it has none left.
   */
  private onReserve(raw: unknown): void {
    const r = raw as { workflowId?: unknown; runId?: unknown; id?: unknown; usd?: unknown } | null;
    if (!r || typeof r !== 'object' || typeof r.workflowId !== 'string' || typeof r.id !== 'string') return;
    const child = this.running.get(r.workflowId);
    if (!child?.handle || child.runId === undefined || r.runId !== child.runId || r.id.length > 200) return;
    if (typeof r.usd !== 'number' || !Number.isFinite(r.usd) || r.usd < 0) return;
    const id = r.id;
    const handle = child.handle;
    const grant = (granted: boolean) => handle.signal(subagentGrantSignal, { id, granted }).catch(() => undefined);
    const budget = this.c.budget;
    if (!budget) {
      void grant(true);
      return;
    }
    void budget
      .admit(Math.min(r.usd, MAX_RESERVATION_USD))
      .then((held) => {
        // Ended meanwhile: nothing will release it.
        if (held && this.running.get(child.workflowId) !== child) {
          budget.release(held);
          return;
        }
        if (held) child.reservations.set(id, held);
        void grant(held !== undefined);
      })
      // This run is being cancelled (the wait for room, or for its own parent's grant, ends with it):
      // the child is cancelled with it and asks no more.
      .catch(() => undefined);
  }

  /** A decision on an approval below this run: an event here, and up to this run's parent (when it has one). */
  private record(resolved: ResolvedApproval): void {
    this.c.emit({ kind: 'approval_resolved', ...resolved });
    this.c.resolvedBelow(resolved);
  }

  /** Cancels every running subagent (each records its end); their tool results say why. */
  stopAll(reason: string): void {
    for (const r of this.running.values()) {
      if (r.stopped) continue;
      r.stopped = reason;
      this.c.emit({ kind: 'notice', message: `stopping subagent ${r.workflowId}: ${reason}` });
      r.scope.cancel();
    }
  }
}
