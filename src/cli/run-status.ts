import { rateLimitWaits, type RateLimitWait } from './rate-limit-status';
import type { Client, WorkflowExecutionDescription, WorkflowExecutionInfo } from '@temporalio/client';
import { RunEndedError, getRun, queryState, runResult } from '../client';
import type { ForkOrigin } from '../shared/fork';
import { forkOriginOf } from './fork-origin';
import type { AgentRunResult, AgentRunState, Usage } from '../shared';
import {
  STATUS_ANSWER_BUDGET_MS,
  STATUS_QUERY_MIN_PATIENCE_MS,
  STATUS_QUERY_PATIENCE_MS,
  serverRecord,
  serverRecordNote,
  type ServerRecord,
} from './server-record';
import {
  TERMINAL_STATUSES,
  costSearchAttribute,
  iterationsSearchAttribute,
  modelSearchAttribute,
  statusSearchAttribute,
} from '../shared';

/**
 * A run's status as the CLI reports it: what the workflow says while Temporal has it open or once
 * it ended by itself, and what Temporal says when it ended the run without the workflow's code
 * running (terminate, run timeout) or handed it over to a successor (continue-as-new). The search
 * attribute `DurableAgentStatus` can lag behind in those cases; Temporal's execution status cannot.
 */

/** Statuses only Temporal knows: the workflow had no chance to write them. */
export { TEMPORAL_ONLY_STATUSES } from './list-flags';

/** Temporal's execution status name → ours, for runs Temporal closed. */
const CLOSED_BY_TEMPORAL: Readonly<Record<string, string>> = {
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
  CONTINUED_AS_NEW: 'continued',
};

/**
 * Reconciles the status the workflow last wrote (`stored`, maybe stale or absent) with Temporal's
 * execution status (`RUNNING`, `COMPLETED`, …). Never `running` (or another open status) for a
 * closed execution.
 */
export function reconcileStatus(executionStatus: string, stored: string | undefined): string {
  const endedOurWay = stored !== undefined && (TERMINAL_STATUSES as readonly string[]).includes(stored);
  switch (executionStatus) {
    case 'RUNNING':
      // A new execution starts with the attributes its predecessor handed over ('continued') until
      // it writes its own. The workflow may already have written its end while it waits for its
      // handlers to finish: that one stands.
      return stored === undefined || stored === 'continued' ? 'running' : stored;
    case 'COMPLETED':
      // Every exit reason but `failed` completes; a run without our attributes has none to tell.
      return endedOurWay ? (stored as string) : 'completed';
    default:
      return CLOSED_BY_TEMPORAL[executionStatus] ?? executionStatus.toLowerCase();
  }
}

type WithAttributes = Pick<WorkflowExecutionInfo, 'typedSearchAttributes' | 'searchAttributes'>;

/** One of our search attributes on an execution, or undefined. */
export function searchAttribute(info: WithAttributes, name: string): unknown {
  const typed = info.typedSearchAttributes.getAll().find((pair) => pair.key.name === name)?.value;
  if (typed !== undefined) return typed;
  // Servers that omit type metadata still return the raw value.
  const raw = info.searchAttributes?.[name];
  return Array.isArray(raw) ? raw[0] : undefined;
}

/** What the search attributes say about a run (each `null` when the run does not carry it). */
export function indexedFigures(info: WithAttributes): {
  stored: string | undefined;
  iterations: number | null;
  costUsd: number | null;
  model: string | null;
} {
  const stored = searchAttribute(info, statusSearchAttribute.name);
  const iterations = searchAttribute(info, iterationsSearchAttribute.name);
  const cost = searchAttribute(info, costSearchAttribute.name);
  const model = searchAttribute(info, modelSearchAttribute.name);
  return {
    stored: typeof stored === 'string' ? stored : undefined,
    iterations: typeof iterations === 'number' ? iterations : null,
    costUsd: typeof cost === 'number' ? cost : null,
    model: typeof model === 'string' ? model : null,
  };
}

/** `durable-agent status --json`: the run's figures and where they come from. */
export interface RunStatusReport {
  workflowId: string;
  /** The latest execution of the run (continue-as-new hands a run over to a new execution). */
  runId: string;
  status: string;
  /** Temporal's execution status, e.g. `RUNNING`, `COMPLETED`, `TERMINATED`. */
  executionStatus: string;
  /**
   * `query`: the live `state` query (its fields are then all here too); `result`: the closed run's result
   * in history; `search-attributes`: the last indexed figures (with `server`: the server's record of an
   * open run that did not answer in time).
   */
  source: 'query' | 'result' | 'search-attributes';
  /** An open run that did not answer in time: what the server holds (in-flight calls, the time it was read). */
  server?: ServerRecord;
  iteration: number | null;
  costUsd: number | null;
  model: string | null;
  usage?: Usage;
  startTime: string;
  closeTime: string | null;
  /** Why the run ended, when it did not complete. */
  reason?: string;
  /** Why the live figures could not be read (no worker answered the query). */
  note?: string;
  /** The closed run's result, when it left one (every exit reason but a Temporal cancel, terminate or timeout). */
  result?: AgentRunResult;
  /** A fork: the run and turn it was forked from (its memo `forkedFrom`; docs/checkpoints.md). */
  forkedFrom?: ForkOrigin | { workflowId: string };
  /** Model calls waiting for their provider key's rate budget now (docs/models.md, "Rate limits"). */
  rateLimited?: RateLimitWait[];
}

/** An open run answered by its `state` query: every field of `AgentRunState` is there too, at the top. */
export type LiveRunStatusReport = RunStatusReport & AgentRunState & { source: 'query' };

export function isLive(report: RunStatusReport): report is LiveRunStatusReport {
  return report.source === 'query';
}

export interface RunStatusOptions {
  /**
   * How long an open run's `state` query may take before the server's record stands in (the query needs
   * the run's worker, and waits behind a busy one). Default: what is left of `STATUS_ANSWER_BUDGET_MS`
   * after the describe, between `STATUS_QUERY_MIN_PATIENCE_MS` and `STATUS_QUERY_PATIENCE_MS`.
   */
  queryTimeoutMs?: number;
}

/**
 * The status of a run: for an open run the `state` query (falling back to its search attributes
 * when no worker answers in time); for a closed run its result or failure, read from history at
 * once with no worker and no query.
 */
export async function runStatus(client: Client, workflowId: string, options: RunStatusOptions = {}) {
  // Without a run id, describe answers for the latest execution: the end of a continue-as-new chain.
  const started = Date.now();
  const description = await getRun(client, workflowId).describe();
  const executionStatus = description.status.name;
  const figures = indexedFigures(description);
  const base: RunStatusReport = {
    workflowId,
    runId: description.runId,
    status: reconcileStatus(executionStatus, figures.stored),
    executionStatus,
    source: 'search-attributes',
    iteration: figures.iterations,
    costUsd: figures.costUsd,
    model: figures.model,
    startTime: description.startTime.toISOString(),
    closeTime: description.closeTime ? description.closeTime.toISOString() : null,
  };
  const origin = forkOriginOf(description);
  if (origin) base.forkedFrom = origin;
  const waits = executionStatus === 'RUNNING' ? rateLimitWaits(description) : [];
  if (waits.length) base.rateLimited = waits;
  if (executionStatus === 'RUNNING') {
    const left = STATUS_ANSWER_BUDGET_MS - (Date.now() - started);
    const patience = Math.min(STATUS_QUERY_PATIENCE_MS, Math.max(STATUS_QUERY_MIN_PATIENCE_MS, left));
    return openRunStatus(client, description, base, options.queryTimeoutMs ?? patience);
  }
  return closedRunStatus(client, description, base);
}

async function openRunStatus(
  client: Client,
  description: WorkflowExecutionDescription,
  base: RunStatusReport,
  patience: number,
): Promise<RunStatusReport> {
  const handle = client.workflow.getHandle(description.workflowId, description.runId);
  const deadline = Date.now() + patience;
  let why: string | undefined;
  try {
    const state = await client.connection.withDeadline(deadline, () => queryState(handle));
    // The execution was open when described; the query may answer a moment after it closed.
    const live: LiveRunStatusReport = { ...base, ...state, source: 'query' };
    return live;
  } catch (e) {
    // Not answered in time: the server holds a query until the run's worker gets to it (a busy worker
    // takes seconds). Another failure (a failing workflow task, say) is told in the server's words.
    if (Date.now() < deadline - 50 && !isDeadline(e)) why = firstLineOf(e);
  }
  const server = await serverRecord(description, client.options.loadedDataConverter);
  return { ...base, server, note: serverRecordNote(server, patience, why, description.taskQueue) };
}

function isDeadline(e: unknown): boolean {
  return /deadline|DEADLINE_EXCEEDED|timed? ?out/i.test(firstLineOf(e));
}

function firstLineOf(e: unknown): string {
  const cause = (e as { cause?: { message?: unknown } }).cause?.message;
  return (
    [(e as Error).message || String(e), typeof cause === 'string' ? cause : undefined]
      .filter(Boolean)
      .join(': ')
      .split('\n')[0] ?? ''
  ).slice(0, 300);
}

async function closedRunStatus(
  client: Client,
  description: WorkflowExecutionDescription,
  base: RunStatusReport,
): Promise<RunStatusReport> {
  // This execution is closed: its result comes from its close event at once. Pinned to its run id so
  // that a run started later under the same workflow id is not waited for.
  const handle = client.workflow.getHandle(description.workflowId, description.runId, { followRuns: false });
  try {
    const result = await runResult(handle);
    return {
      ...base,
      status: result.exitReason,
      source: 'result',
      iteration: result.iterations,
      costUsd: result.costUsd,
      model: result.model,
      usage: result.usage,
      result,
      ...(result.exitReason !== 'completed' ? { reason: endReason(result) } : {}),
    };
  } catch (e) {
    if (e instanceof RunEndedError) return { ...base, reason: e.reason };
    throw e;
  }
}

function endReason(result: AgentRunResult): string {
  return result.error ? `${result.exitReason}: ${result.error.message}` : result.exitReason;
}
