import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { baseActivityName } from '../shared/activity-names';
import { visibleLine } from './terminal-text';

/**
 * What an open run is doing as the Temporal server itself holds it (`describe()`: pending activities
 * with their heartbeat details, the pending workflow task), read without the run's worker. `status`
 * shows this when the run's own answer (the `state` query) would wait behind a busy worker.
 */

/**
 * How long `status` waits for the run's own answer before the server's record stands in: what is left
 * of STATUS_ANSWER_BUDGET_MS once the run is described, between these two bounds. A worker with time for
 * the query answers within tens of milliseconds; a busy one takes seconds, so waiting longer buys little.
 */
export const STATUS_QUERY_PATIENCE_MS = 300;
export const STATUS_QUERY_MIN_PATIENCE_MS = 100;
/** What `status` aims to answer an open run within (describe, then the query), under the 0.5 s of issue 44. */
export const STATUS_ANSWER_BUDGET_MS = 350;
/** `status --live`: how long it waits for the run's own answer (then the server's record stands in). */
export const STATUS_LIVE_TIMEOUT_MS = 10_000;
/** A workflow task pending longer than this is named in the note: maybe no worker polls. */
const STALLED_TASK_MS = 10_000;
/** Characters of a heartbeat's text (a tool call in short, a model id) shown. */
const DETAIL_CHARS = 200;

/** An activity the run has in flight, as the server holds it. */
export interface InFlightCall {
  /** `model call`, `closing summary`, `tool`, `hook` or the activity's name. */
  kind: string;
  /** The model, the tool, the hook event; the activity's name when its heartbeat has not said yet. */
  name: string;
  /** The tool call in short (its heartbeat's `call`), when the tool has heartbeated. */
  detail?: string;
  attempt: number;
  /** When this attempt started (ISO), or null while it waits for a worker. */
  startedAt: string | null;
}

/** The part of a `status` report read from the server's record of an open run. */
export interface ServerRecord {
  /** When the server was asked (ISO): the record is the server's state then. */
  asOf: string;
  inFlight: InFlightCall[];
  /** Since when a workflow task waits for the run's worker (ISO), or null when none does. */
  workflowTaskPendingSince: string | null;
}

const iso = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): string | null => {
  if (!t || t.seconds === undefined || t.seconds === null) return null;
  const ms = Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
};

const shown = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? visibleLine(value.slice(0, DETAIL_CHARS)) : undefined;

/** A pending activity in words, from its type and its newest heartbeat details (another worker's: untrusted). */
function describeCall(activityName: string, details: unknown): Pick<InFlightCall, 'kind' | 'name' | 'detail'> {
  const base = baseActivityName(activityName);
  const d = typeof details === 'object' && details !== null ? (details as Record<string, unknown>) : {};
  for (const label of ['model call', 'closing summary']) {
    const model = shown(d[label]);
    if (model) return { kind: label, name: model };
  }
  if (shown(d.hook)) return { kind: 'hook', name: `${shown(d.hook)}${shown(d.tool) ? ` ${shown(d.tool)}` : ''}` };
  const tool = shown(d.tool);
  if (tool) {
    const call = shown(d.call);
    return { kind: 'tool', name: tool, ...(call ? { detail: call } : {}) };
  }
  if (base === 'callModel' || base === 'firstModelCall') return { kind: 'model call', name: base };
  if (base === 'runTool') return { kind: 'tool', name: base };
  return { kind: visibleLine(base.slice(0, 100)), name: visibleLine(base.slice(0, 100)) };
}

/** The server's record of an open run, from a description already read. */
export async function serverRecord(
  description: WorkflowExecutionDescription,
  converter: LoadedDataConverter,
  now = new Date(),
): Promise<ServerRecord> {
  const raw = description.raw;
  const inFlight: InFlightCall[] = [];
  for (const a of raw.pendingActivities ?? []) {
    let details: unknown;
    const payloads = a.heartbeatDetails?.payloads;
    if (payloads?.length) {
      try {
        details = (await decodeArrayFromPayloads(converter, payloads))[0];
      } catch {
        // Details this client cannot decode (another codec key): the activity's name stands.
      }
    }
    inFlight.push({
      ...describeCall(a.activityType?.name ?? 'activity', details),
      attempt: a.attempt ?? 1,
      startedAt: iso(a.lastStartedTime as never),
    });
  }
  const task = raw.pendingWorkflowTask;
  return {
    asOf: now.toISOString(),
    inFlight,
    workflowTaskPendingSince: task ? iso((task.originalScheduledTime ?? task.scheduledTime) as never) : null,
  };
}

/**
 * The note of a report read from the server's record: why, and how fresh each figure is. `why`: the
 * query's own failure, in the server's words, or undefined when it only did not answer in time.
 */
export function serverRecordNote(
  record: ServerRecord,
  patienceMs: number,
  why: string | undefined,
  taskQueue?: string,
): string {
  const clock = record.asOf.slice(11, 19);
  const parts = [
    why
      ? `the run's state query failed (${why})`
      : `the run did not answer within ${formatPatience(patienceMs)} (its worker is busy, or none polls)`,
    `so this is the server's record at ${clock} UTC: what runs now is exact; status and model as the run last ` +
      'indexed them; iteration and cost as last indexed (rewritten at each status change and at 10, 20, 50… ' +
      'iterations and 0.10, 0.20, 0.50… USD, so they may lag)',
  ];
  const since = record.workflowTaskPendingSince ? Date.parse(record.workflowTaskPendingSince) : NaN;
  const waited = Date.parse(record.asOf) - since;
  if (Number.isFinite(waited) && waited > STALLED_TASK_MS) {
    parts.push(
      `a workflow task has waited ${Math.round(waited / 1000)} s for a worker: is one polling` +
        `${taskQueue ? ` task queue '${visibleLine(taskQueue.slice(0, 100))}'` : ''}?`,
    );
  }
  parts.push("'status --live' waits for the run's own answer");
  return parts.join('; ');
}

function formatPatience(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s` : `${ms} ms`;
}
