import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { WORKFLOW_TYPE, statusSearchAttribute } from '../shared';
import { formatCost } from './format';
import { inertJson, visibleLine } from './terminal-text';
import { indexedFigures, reconcileStatus } from './run-status';
import { OPEN_STATUSES, RUN_STATUSES } from './list-flags';
import { describeForkOrigin, forkOriginOf } from './fork-origin';
import type { ForkOrigin } from '../shared/fork';

export { DEFAULT_LIST_LIMIT, RUN_STATUSES } from './list-flags';

export function isRunStatus(value: string): boolean {
  return RUN_STATUSES.includes(value);
}

export interface ListFlags {
  /** One of RUN_STATUSES. */
  status?: string;
  limit: number;
  /** A raw visibility query; replaces the default filter. */
  query?: string;
  /** `--top-level`: only runs no workflow started as its child (no subagents). */
  topLevel?: boolean;
  json: boolean;
}

/** One run as `list` shows it. Fields our search attributes carry are `null` for runs without them. */
export interface RunListing {
  workflowId: string;
  runId: string;
  /** Our status, reconciled with Temporal's: never an open status for a closed execution. */
  status: string;
  /** Temporal's execution status, e.g. `RUNNING`, `COMPLETED`, `TERMINATED`. */
  executionStatus: string;
  iterations: number | null;
  /** `null` when unknown: a run on a model without a price, or one without our search attributes. */
  costUsd: number | null;
  model: string | null;
  startTime: string;
  closeTime: string | null;
  taskQueue: string;
  /** A fork: the run (and turn) it was forked from; `null` for other runs. */
  forkedFrom?: ForkOrigin | { workflowId: string } | null;
}

/** Temporal's `ExecutionStatus` values for the statuses only Temporal records. */
const EXECUTION_STATUS_OF: Readonly<Record<string, string>> = {
  cancelled: 'Canceled',
  terminated: 'Terminated',
  timed_out: 'TimedOut',
  continued: 'ContinuedAsNew',
};

/**
 * The visibility filter for one status. `DurableAgentStatus` alone is not enough: a run terminated
 * or timed out keeps the value it last wrote (`running`), and so does an execution that continued
 * as new; pairing it with `ExecutionStatus` keeps the two consistent.
 */
export function statusFilter(status: string): string {
  const ours = `${statusSearchAttribute.name} = '${status}'`;
  const temporal = EXECUTION_STATUS_OF[status];
  if (temporal) return `ExecutionStatus = '${temporal}'`;
  if ((OPEN_STATUSES as readonly string[]).includes(status)) return `${ours} AND ExecutionStatus = 'Running'`;
  // An agent failure ends the execution Failed; runs recorded before that completed with `failed`.
  if (status === 'failed') return `(ExecutionStatus = 'Failed' OR (${ours} AND ExecutionStatus = 'Completed'))`;
  return `${ours} AND ExecutionStatus = 'Completed'`;
}

/**
 * The visibility query for `list`: agent runs (without the closed executions that handed over to a
 * continue-as-new successor, unless `--status continued` asks for them), or the raw `--query`;
 * `--status` narrows either.
 */
export function listQuery(flags: Pick<ListFlags, 'status' | 'query' | 'topLevel'>): string {
  const base = flags.query?.trim();
  const status = flags.status ? statusFilter(flags.status) : undefined;
  const topLevel = flags.topLevel ? [TOP_LEVEL_FILTER] : [];
  if (base) {
    const narrowed = [...(status ? [status] : []), ...topLevel];
    return narrowed.length ? [`(${base})`, ...narrowed].join(' AND ') : base;
  }
  return [`WorkflowType = '${WORKFLOW_TYPE}'`, status ?? `ExecutionStatus != 'ContinuedAsNew'`, ...topLevel].join(
    ' AND ',
  );
}

/** Runs without a parent workflow: subagents (child runs) are left out. */
export const TOP_LEVEL_FILTER = 'ParentWorkflowId IS NULL';

export function toListing(info: WorkflowExecutionInfo): RunListing {
  const { stored, iterations, costUsd, model } = indexedFigures(info);
  const executionStatus = info.status.name;
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    status: reconcileStatus(executionStatus, stored),
    executionStatus,
    iterations,
    costUsd,
    model,
    startTime: info.startTime.toISOString(),
    closeTime: info.closeTime ? info.closeTime.toISOString() : null,
    taskQueue: info.taskQueue,
    forkedFrom: forkOriginOf(info),
  };
}

/** Up to `limit` runs matching the query, in the server's order (open runs first, then most recently closed). */
export async function listRuns(client: Client, flags: Pick<ListFlags, 'status' | 'query' | 'limit' | 'topLevel'>) {
  const query = listQuery(flags);
  const runs: RunListing[] = [];
  try {
    for await (const info of client.workflow.list({ query, pageSize: Math.min(flags.limit, 1000) })) {
      runs.push(toListing(info));
      if (runs.length >= flags.limit) break;
    }
  } catch (e) {
    const message = (e as Error).message ?? String(e);
    if (message.includes(statusSearchAttribute.name)) {
      throw new Error(
        `The server does not know durable-agent's search attributes (${message}). The embedded dev server ` +
          'registers them; on another cluster run the temporal-setup step of docker-compose.yml, or ' +
          '`temporal operator search-attribute create` for each of DurableAgentStatus, DurableAgentIterations, ' +
          'DurableAgentCostUsd and DurableAgentModel.',
      );
    }
    throw e;
  }
  return { query, runs };
}

/** `2026-11-22 03:49:37` in local time. */
function localTime(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

export function formatRunList(runs: RunListing[]): string {
  // The column only when a listed run is a fork.
  const forks = runs.some((r) => r.forkedFrom);
  const rows = runs.map((r) => {
    // Runs without our attributes (older ones) carry no cost: a dash, not "unknown".
    const known = r.model !== null || r.iterations !== null;
    // Ids, statuses and model names are whatever a client wrote into the run: shown inert.
    return [
      visibleLine(r.workflowId),
      visibleLine(r.status),
      r.iterations === null ? '-' : String(r.iterations),
      known ? formatCost(r.costUsd) : '-',
      visibleLine(r.model ?? '-'),
      localTime(r.startTime),
      ...(forks ? [r.forkedFrom ? visibleLine(describeForkOrigin(r.forkedFrom)) : '-'] : []),
    ];
  });
  const header = ['ID', 'STATUS', 'ITER', 'COST', 'MODEL', 'STARTED', ...(forks ? ['FORKED FROM'] : [])];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const rightAligned = new Set([2, 3]);
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** `durable-agent list`: recent runs from the visibility store (our search attributes, or what Temporal knows). */
export async function listCommand(flags: ListFlags, client: Client, out: (line: string) => void): Promise<number> {
  const { query, runs } = await listRuns(client, flags);
  if (flags.json) out(inertJson(JSON.stringify(runs, null, 2)));
  else if (runs.length === 0) out(`No runs match: ${visibleLine(query)}`);
  else out(formatRunList(runs));
  return 0;
}
