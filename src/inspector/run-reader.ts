import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { baseActivityName } from '../shared/activity-names';
import { decodeEvent, firstRunId, historyPage, type HistoryRecord } from '../client/transcript/history';
import { TranscriptBuilder, type Transcript } from '../client/transcript/rebuild';
import { ChildRecords, matchChildren } from '../client/transcript/subagents';
import type { CallTiming, TurnCheckpoint } from './run-view';

/**
 * One pass over a run's history, across continue-as-new: the transcript (rebuilt as the CLI's
 * `transcript` does), and beside it what the transcript leaves out: when each model and tool call
 * ran, what each model call answered (a turn), the messages operators sent, and checkpoint refs.
 */

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type HistoryPage = temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse;

const MODEL_CALLS = new Set(['callModel', 'firstModelCall']);
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';
/** The execution chain is followed this far at most (a chain that loops back is cut at once). */
const MAX_EXECUTIONS = 1_000;

/** A model call that answered: one turn. */
export interface ModelAnswer {
  model: string;
  content: unknown[];
  stopReason: string | null;
  usage: unknown;
  timing: CallTiming;
}

export interface RunRecord {
  transcript: Transcript;
  answers: ModelAnswer[];
  /** Tool call timings by tool use id. */
  toolTimings: Map<string, CallTiming>;
  /** Local tool calls, whose tool use id history does not hold: in order. */
  localToolTimings: CallTiming[];
  /** Messages taken through the `sendMessage` update, with when. */
  sentMessages: { at: number; message: string }[];
  /** Model or tool calls that failed for good. */
  failures: CallTiming[];
  checkpoints: TurnCheckpoint[];
  /** Each `task` call's subagent. */
  subagents: { workflowId: string; toolUseId: string | null; agent?: string; description?: string }[];
}

interface Scheduled {
  type: string;
  model?: string;
  toolUseId?: string;
  timing: CallTiming;
}

export async function readRunRecord(client: Client, workflowId: string): Promise<RunRecord> {
  const builder = new TranscriptBuilder(workflowId);
  const children = new ChildRecords();
  const record: Omit<RunRecord, 'transcript' | 'subagents'> = {
    answers: [],
    toolTimings: new Map(),
    localToolTimings: [],
    sentMessages: [],
    failures: [],
    checkpoints: [],
  };
  const seen = new Set<string>();
  let runId: string | undefined = await firstRunId(client, workflowId);
  while (runId && !seen.has(runId) && seen.size < MAX_EXECUTIONS) {
    seen.add(runId);
    const reader = new ExecutionReader(client, runId, record);
    let next: string | undefined;
    const current: string = runId;
    let fetching: Promise<HistoryPage> | undefined = historyPage(client, workflowId, current);
    while (fetching) {
      const page: HistoryPage = await fetching;
      const token: Uint8Array | undefined =
        page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
      // The next page travels while this one is decoded.
      fetching = token ? historyPage(client, workflowId, current, token) : undefined;
      for (const event of page.history?.events ?? []) {
        const decoded = await decodeEvent(client, runId, event, reader.scheduledTypes);
        if (decoded?.kind === 'continued_as_new') next = decoded.newRunId || undefined;
        if (decoded) {
          builder.add(decoded);
          children.add(decoded);
        }
        await reader.add(event, decoded);
      }
    }
    runId = next;
  }
  const transcript = builder.transcript;
  return { transcript, subagents: matchChildren(transcript, children.started), ...record };
}

class ExecutionReader {
  /** Shared with `decodeEvent`, which keeps activity types from scheduled to completed in it. */
  readonly scheduledTypes = new Map<string, string>();
  private readonly scheduled = new Map<string, Scheduled>();

  constructor(
    private readonly client: Client,
    private readonly runId: string,
    private readonly out: Omit<RunRecord, 'transcript' | 'subagents'>,
  ) {}

  /** `decoded`: what `decodeEvent` made of the event (its payloads decoded once, here reused). */
  async add(event: HistoryEvent, decoded: HistoryRecord | undefined): Promise<void> {
    const result = decoded && 'result' in decoded ? decoded.result : undefined;
    const id = String(event.eventId ?? '');
    const at = optionalTsToMs(event.eventTime) ?? 0;
    switch (event.eventType) {
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const a = event.activityTaskScheduledEventAttributes;
        const type = baseActivityName(a?.activityType?.name ?? '');
        if (!MODEL_CALLS.has(type) && type !== 'runTool') return;
        // A model call's input was decoded for the transcript already; a tool call's is decoded here.
        const input = asObject(
          decoded?.kind === 'activity_scheduled' && decoded.input !== undefined
            ? decoded.input
            : type === 'runTool'
              ? await this.decode(a?.input?.payloads)
              : undefined,
        );
        this.scheduled.set(id, {
          type,
          ...(typeof input?.['model'] === 'string' ? { model: input['model'] } : {}),
          ...(typeof input?.['toolUseId'] === 'string' ? { toolUseId: input['toolUseId'] } : {}),
          timing: { runId: this.runId, eventId: id, scheduledAt: at, attempt: 1 },
        });
        return;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const a = event.activityTaskStartedEventAttributes;
        const call = this.scheduled.get(String(a?.scheduledEventId ?? ''));
        if (!call) return;
        call.timing.startedAt = at;
        call.timing.attempt = a?.attempt ?? 1;
        if (a?.lastFailure?.message) call.timing.lastFailure = a.lastFailure.message;
        return;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        return this.completed(String(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? ''), at, result);
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        return this.ended(
          String(event.activityTaskFailedEventAttributes?.scheduledEventId ?? ''),
          at,
          event.activityTaskFailedEventAttributes?.failure?.message ?? 'failed',
        );
      case EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        return this.ended(String(event.activityTaskTimedOutEventAttributes?.scheduledEventId ?? ''), at, 'timed out');
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
        return this.ended(String(event.activityTaskCanceledEventAttributes?.scheduledEventId ?? ''), at, 'cancelled');
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        return this.marker(event, id, at, result);
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED: {
        const input = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
        if (input?.name !== 'sendMessage') return;
        const arg = asObject(await this.decode(input.args?.payloads));
        if (typeof arg?.['message'] === 'string') this.out.sentMessages.push({ at, message: arg['message'] });
        return;
      }
      default:
        return;
    }
  }

  private completed(scheduledId: string, at: number, result: unknown): void {
    const call = this.scheduled.get(scheduledId);
    if (!call) return;
    this.scheduled.delete(scheduledId);
    call.timing.endedAt = at;
    const out = asObject(result);
    if (call.type === 'runTool') {
      if (call.toolUseId) this.out.toolTimings.set(call.toolUseId, call.timing);
      this.checkpoint(out?.['checkpoint']);
      return;
    }
    // A run's first call (0.3.0) wraps its answer, and its run start's checkpoint.
    const response = call.type === 'firstModelCall' ? asObject(out?.['response']) : out;
    if (call.type === 'firstModelCall') this.checkpoint(asObject(out?.['prepared'])?.['checkpoint']);
    if (!response || !Array.isArray(response['content'])) return;
    this.out.answers.push({
      model: call.model ?? (typeof response['model'] === 'string' ? response['model'] : ''),
      content: response['content'],
      stopReason: typeof response['stopReason'] === 'string' ? response['stopReason'] : null,
      usage: response['usage'],
      timing: call.timing,
    });
  }

  private ended(scheduledId: string, at: number, failure: string): void {
    const call = this.scheduled.get(scheduledId);
    if (!call) return;
    this.scheduled.delete(scheduledId);
    call.timing.endedAt = at;
    call.timing.failure = failure;
    if (call.toolUseId) this.out.toolTimings.set(call.toolUseId, call.timing);
    this.out.failures.push(call.timing);
  }

  private marker(event: HistoryEvent, id: string, at: number, result: unknown): void {
    const a = event.markerRecordedEventAttributes;
    if (a?.markerName !== LOCAL_ACTIVITY_MARKER) return;
    const data = a.details?.['data']?.payloads?.[0];
    let meta: Record<string, unknown> | undefined;
    try {
      meta = data ? asObject(defaultPayloadConverter.fromPayload(data)) : undefined;
    } catch {
      return;
    }
    if (baseActivityName(String(meta?.['activity_type'] ?? '')) !== 'runTool') return;
    const scheduledAt = timeOf(meta?.['original_schedule_time']) ?? at;
    const timing: CallTiming = {
      runId: this.runId,
      eventId: id,
      scheduledAt,
      startedAt: scheduledAt,
      endedAt: at,
      attempt: typeof meta?.['attempt'] === 'number' ? meta['attempt'] : 1,
      ...(a.failure?.message ? { failure: a.failure.message } : {}),
    };
    this.out.localToolTimings.push(timing);
    this.checkpoint(asObject(result)?.['checkpoint']);
  }

  private checkpoint(value: unknown): void {
    const ref = asObject(value);
    if (!ref || typeof ref['turn'] !== 'number' || typeof ref['id'] !== 'string' || !ref['id']) return;
    const entry: TurnCheckpoint & { startedAtMs: number } = {
      turn: ref['turn'],
      id: ref['id'],
      filesChanged: typeof ref['filesChanged'] === 'number' ? ref['filesChanged'] : 0,
      bytes: typeof ref['bytes'] === 'number' ? ref['bytes'] : 0,
      startedAtMs: typeof ref['startedAtMs'] === 'number' ? ref['startedAtMs'] : 0,
    };
    // Among a turn's refs, the latest-started one saw every tool's writes (docs/checkpoints.md).
    const list = this.out.checkpoints as (TurnCheckpoint & { startedAtMs: number })[];
    const index = list.findIndex((c) => c.turn === entry.turn);
    if (index < 0) list.push(entry);
    else if (list[index]!.startedAtMs <= entry.startedAtMs) list[index] = entry;
  }

  private async decode(payloads: temporal.api.common.v1.IPayload[] | null | undefined): Promise<unknown> {
    if (!payloads?.length) return undefined;
    return decodeFromPayloadsAtIndex(this.client.options.loadedDataConverter, 0, payloads).catch(() => undefined);
  }
}

/** A Core timestamp in a marker's JSON: `{ seconds, nanos }`, or an ISO string. */
function timeOf(value: unknown): number | undefined {
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isFinite(ms) ? ms : undefined;
  }
  const t = asObject(value);
  if (!t) return undefined;
  const seconds = Number(t['seconds'] ?? 0);
  const nanos = Number(t['nanos'] ?? 0);
  return Number.isFinite(seconds) && Number.isFinite(nanos) && seconds > 0 ? seconds * 1000 + nanos / 1e6 : undefined;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
