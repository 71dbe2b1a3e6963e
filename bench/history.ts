import type { Client, WorkflowHandle } from '@temporalio/client';
import { median } from './stats';
import { baseActivityName } from '../src/shared/activity-names';

export type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type HistoryEvent = NonNullable<History['events']>[number];

/** Activity types that run one tool call (as activities or local activities): one per iteration in the bench's agent. */
const TOOL_ACTIVITIES = new Set(['runTool', 'naiveRunTool']);

/** Temporal's history warning threshold (10 MiB; the server's limit is 50 MiB). */
export const HISTORY_WARN_BYTES = 10 * 1024 * 1024;

export interface RunSize {
  runId: string;
  status: string;
  /** Events in the run's history (`historyLength`). */
  events: number;
  /** The server's history size of the run (`historySize`), the figure its limits apply to. */
  bytes: number;
}

/** The histories of a workflow id's chain of runs (continue-as-new followed), measured. */
export interface ChainSize {
  workflowId: string;
  runs: RunSize[];
  totalEvents: number;
  totalBytes: number;
  largestRunBytes: number;
  largestRunEvents: number;
  /** Tool activities completed over the chain: iterations actually done, also for a run that was stopped. */
  toolCallsCompleted: number;
  /** How the last run ended: `completed`, or the server's or workflow's reason it did not. */
  outcome: string;
  /** Iterations done when the server first suggested continue-as-new / the history passed 10 MiB (first run). */
  continueAsNewSuggestedAt?: number;
  warnThresholdAt?: number;
  /** Median time from an activity's scheduling to its start: ~0 when it was dispatched eagerly. */
  medianScheduleToStartMs?: number;
  /** Median time from a workflow task's scheduling to its start (the dispatch to the worker). */
  medianWorkflowTaskScheduleToStartMs?: number;
}

/** Fetches and measures every run of the chain that starts at `firstRunId`. */
export async function measureChain(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<{ size: ChainSize; histories: History[] }> {
  const runs: RunSize[] = [];
  const histories: History[] = [];
  let runId: string | undefined = firstRunId;
  let toolCallsCompleted = 0;
  let outcome = 'unknown';
  let continueAsNewSuggestedAt: number | undefined;
  let warnThresholdAt: number | undefined;
  const scheduleToStart: number[] = [];
  const taskScheduleToStart: number[] = [];

  while (runId) {
    const handle = client.workflow.getHandle(workflowId, runId);
    const [description, history] = await Promise.all([handle.describe(), handle.fetchHistory()]);
    histories.push(history);
    runs.push({
      runId,
      status: description.status.name,
      events: description.historyLength,
      bytes: description.historySize ?? NaN,
    });
    const toolScheduled = new Set<string>();
    const scheduledAt = new Map<string, number>();
    let next: string | undefined;
    let lastTaskFailure: string | undefined;
    for (const event of history.events ?? []) {
      const id = String(event.eventId);
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) {
        if (TOOL_ACTIVITIES.has(baseActivityName(scheduled.activityType?.name ?? ''))) toolScheduled.add(id);
        scheduledAt.set(id, timeOf(event));
      }
      const started = event.activityTaskStartedEventAttributes;
      if (started) {
        const at = scheduledAt.get(String(started.scheduledEventId));
        if (at !== undefined) scheduleToStart.push(timeOf(event) - at);
      }
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed && toolScheduled.has(String(completed.scheduledEventId))) toolCallsCompleted += 1;
      if (isCompletedLocalToolCall(event)) toolCallsCompleted += 1;
      if (event.workflowTaskScheduledEventAttributes) scheduledAt.set(id, timeOf(event));
      const task = event.workflowTaskStartedEventAttributes;
      if (task) {
        const at = scheduledAt.get(String(task.scheduledEventId));
        if (at !== undefined) taskScheduleToStart.push(timeOf(event) - at);
      }
      if (task && runs.length === 1) {
        if (task.suggestContinueAsNew && continueAsNewSuggestedAt === undefined) {
          continueAsNewSuggestedAt = toolCallsCompleted;
        }
        if (toNumber(task.historySizeBytes) >= HISTORY_WARN_BYTES && warnThresholdAt === undefined) {
          warnThresholdAt = toolCallsCompleted;
        }
      }
      if (event.workflowTaskFailedEventAttributes) {
        lastTaskFailure = event.workflowTaskFailedEventAttributes.failure?.message ?? 'workflow task failed';
      }
      outcome = closeOutcome(event, lastTaskFailure) ?? outcome;
      next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? next;
    }
    if (description.status.name === 'RUNNING')
      outcome = `still running${lastTaskFailure ? `: ${lastTaskFailure}` : ''}`;
    runId = next;
  }

  const largest = runs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return {
    size: {
      workflowId,
      runs,
      totalEvents: sum(runs.map((r) => r.events)),
      totalBytes: sum(runs.map((r) => r.bytes)),
      largestRunBytes: largest.bytes,
      largestRunEvents: Math.max(...runs.map((r) => r.events)),
      toolCallsCompleted,
      outcome,
      ...(continueAsNewSuggestedAt !== undefined ? { continueAsNewSuggestedAt } : {}),
      ...(warnThresholdAt !== undefined ? { warnThresholdAt } : {}),
      ...(scheduleToStart.length ? { medianScheduleToStartMs: median(scheduleToStart) } : {}),
      ...(taskScheduleToStart.length ? { medianWorkflowTaskScheduleToStartMs: median(taskScheduleToStart) } : {}),
    },
    histories,
  };
}

/** A local activity's result is a marker: Core's `core_local_activity`, its type in the JSON `data` detail. */
function isCompletedLocalToolCall(event: HistoryEvent): boolean {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity' || marker.failure) return false;
  const data = marker.details?.data?.payloads?.[0]?.data;
  if (!data) return false;
  try {
    const { activity_type: type } = JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string };
    return TOOL_ACTIVITIES.has(baseActivityName(type ?? ''));
  } catch {
    return false;
  }
}

function closeOutcome(event: HistoryEvent, lastTaskFailure: string | undefined): string | undefined {
  if (event.workflowExecutionCompletedEventAttributes) return 'completed';
  if (event.workflowExecutionContinuedAsNewEventAttributes) return 'continued as new';
  const terminated = event.workflowExecutionTerminatedEventAttributes;
  if (terminated) {
    const reason = terminated.reason || 'no reason given';
    return `terminated: ${reason}${lastTaskFailure && !reason.includes(lastTaskFailure) ? ` (${lastTaskFailure})` : ''}`;
  }
  const failed = event.workflowExecutionFailedEventAttributes;
  if (failed) return `failed: ${failed.failure?.message ?? 'unknown failure'}`;
  if (event.workflowExecutionTimedOutEventAttributes) return 'timed out';
  return undefined;
}

function timeOf(event: HistoryEvent): number {
  const t = event.eventTime;
  return t ? toNumber(t.seconds) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;
}

/** int64 fields decode as Long objects (or numbers); the values here fit a double. */
function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (value && typeof (value as { toNumber?: unknown }).toNumber === 'function') {
    return (value as { toNumber(): number }).toNumber();
  }
  return Number(value ?? 0);
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
