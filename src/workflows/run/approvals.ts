import { condition, workflowInfo } from '@temporalio/workflow';
import { objectWithKeys } from './validation';
import { previewInput } from '../../shared/bounds';
import { INPUT_PREVIEW_CHARS } from '../../shared/constants';
import type { ApprovalResult } from '../../shared/definitions';
import type { ToolUseBlock } from '../../shared/messages';
import type { PendingApproval } from '../../shared/run';

export interface Decision {
  approved: boolean;
  reason?: string;
}

interface Waiting {
  approval: PendingApproval;
  decision?: Decision;
}

/** Approvals that wait in this run's subagents: listed with its own, decided by passing the decision down. */
export interface RemoteApprovals {
  list(): PendingApproval[];
  has(toolUseId: string): boolean;
  /** Resolves with the call's tool name once the decision is on its way. */
  forward(decision: { toolUseId: string; approved: boolean; reason?: string }): Promise<string>;
}

const MAX_TOOL_USE_ID_CHARS = 256;
const MAX_REASON_CHARS = 2_000;
const ACCEPTED = '{"toolUseId": string, "reason"?: string}';

/**
 * Tool calls waiting for an operator. A decision belongs to the one waiting call it was given
 * for: it is stored on that call's entry, never under the id alone, so a later call that reuses an
 * id (a confused or hostile model) waits for its own decision.
 */
export class Approvals {
  private readonly waiting = new Map<string, Waiting>();
  private remote: RemoteApprovals | undefined;
  /** Told of every call of this run's own that stopped waiting, and how (a subagent reports it up). */
  onResolved: ((approval: PendingApproval, decision: Decision) => void) | undefined;

  /** The run's subagents (docs/subagents.md): their pending approvals count as this run's. */
  linkRemote(remote: RemoteApprovals): void {
    this.remote = remote;
  }

  get size(): number {
    return this.waiting.size + (this.remote?.list().length ?? 0);
  }

  list(): PendingApproval[] {
    const own = [...this.waiting.values()].map((w) => w.approval);
    return this.remote ? [...own, ...this.remote.list()] : own;
  }

  /** Waits for a decision on this call, or denies it when the timeout passes. */
  async ask(
    toolUse: ToolUseBlock,
    timeoutMs: number,
    onChange: (approval: PendingApproval) => void,
  ): Promise<Decision> {
    const approval: PendingApproval = {
      toolUseId: toolUse.id,
      name: toolUse.name,
      input: previewInput(toolUse.input, INPUT_PREVIEW_CHARS),
      deadline: Date.now() + timeoutMs,
    };
    const entry: Waiting = { approval };
    this.waiting.set(toolUse.id, entry);
    onChange(approval);
    try {
      // Signals sent meanwhile grow the history; past Temporal's suggestion the run must hand over
      // rather than wait on into the history limit, so the call is refused and the model may ask again.
      // The timer is named in the Web UI (not a bare `1 (15m)`): what it waits for and which call.
      await condition(() => entry.decision !== undefined || workflowInfo().continueAsNewSuggested, timeoutMs, {
        summary: `approval timeout: ${toolUse.name} (${toolUse.id})`.slice(0, 200),
      });
      entry.decision ??= workflowInfo().continueAsNewSuggested
        ? {
            approved: false,
            reason:
              'the run had to continue as new before anyone decided (its history grew too large); ' +
              'make the call again if it is still needed',
          }
        : undefined;
    } finally {
      if (this.waiting.get(toolUse.id) === entry) this.waiting.delete(toolUse.id);
    }
    const decision = entry.decision ?? { approved: false, reason: `no decision within ${timeoutMs / 1000} s` };
    this.onResolved?.(approval, decision);
    return decision;
  }

  /** The update validator: says exactly what is accepted and which calls are waiting. */
  validate(raw: unknown): void {
    const update = objectWithKeys(raw, ['toolUseId', 'reason'], ACCEPTED);
    if (typeof update.toolUseId !== 'string' || !update.toolUseId || update.toolUseId.length > MAX_TOOL_USE_ID_CHARS) {
      throw new Error(
        `toolUseId must be a non-empty string of at most ${MAX_TOOL_USE_ID_CHARS} characters; accepted: ${ACCEPTED}`,
      );
    }
    if (update.reason !== undefined && (typeof update.reason !== 'string' || update.reason.length > MAX_REASON_CHARS)) {
      throw new Error(`reason must be a string of at most ${MAX_REASON_CHARS} characters`);
    }
    const entry = this.waiting.get(update.toolUseId);
    if (!entry || entry.decision) {
      if (!entry && this.remote?.has(update.toolUseId)) return;
      const open = [
        ...[...this.waiting.values()].filter((w) => !w.decision).map((w) => w.approval.toolUseId),
        ...(this.remote?.list().map((a) => a.toolUseId) ?? []),
      ];
      throw new Error(
        `no tool call '${update.toolUseId.slice(0, 100)}' is waiting for approval; waiting: ${open.length ? open.join(', ') : '(none)'}`,
      );
    }
  }

  /** The update handler, after `validate` accepted the input. */
  decide(raw: unknown, approved: boolean): ApprovalResult | Promise<ApprovalResult> {
    const { toolUseId, reason } = raw as { toolUseId: string; reason?: string };
    const decision: Decision = reason !== undefined ? { approved, reason } : { approved };
    const entry = this.waiting.get(toolUseId);
    if (!entry && this.remote?.has(toolUseId)) {
      return this.remote.forward({ toolUseId, ...decision }).then((name) => ({ toolUseId, name, approved }));
    }
    if (entry) entry.decision = decision;
    return { toolUseId, name: entry?.approval.name ?? '', approved };
  }
}
