import type { AgentRunState, RunEvent } from '../shared';
import { visibleLine as one } from './terminal-text';
import { formatCost, formatUsage } from './usage-text';

/** The lines a parent run prints about its subagents (docs/subagents.md#watching-a-tree). */

type Started = Extract<RunEvent, { kind: 'subagent_started' }>;
type Finished = Extract<RunEvent, { kind: 'subagent_finished' }>;

/** The parent's own line for a subagent event. */
export function formatSubagentEvent(event: Started | Finished): string {
  if (event.kind === 'subagent_started') {
    const what = event.description ? `: ${one(event.description)}` : '';
    return `  ⇢ subagent ${one(event.agent ?? 'general-purpose')} started${what} (run ${one(event.workflowId)})`;
  }
  return (
    `  ⇠ subagent ${one(event.workflowId)} ended ${one(event.exitReason)} · ${formatUsage(event.usage)} · ` +
    formatCost(event.costUsd)
  );
}

/** `status`: the subagents running now, and where a pending approval waits. */
export function subagentStateLines(state: Pick<AgentRunState, 'subagents'>): string[] {
  return (state.subagents ?? []).map(
    (s) =>
      `subagent    ${one(s.workflowId)} (${one(s.agent ?? 'general-purpose')})` +
      `${s.description ? `: ${one(s.description)}` : ''} · task call ${one(s.toolUseId)}`,
  );
}

export function approvalOrigin(approval: { subagent?: { workflowId: string; agent?: string } }): string {
  const origin = approval.subagent;
  if (!origin) return '';
  return ` (in subagent ${one(origin.agent ?? 'general-purpose')}, run ${one(origin.workflowId)})`;
}
