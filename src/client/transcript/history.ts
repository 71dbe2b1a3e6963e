import { WorkflowNotFoundError, isGrpcServiceError, type Client } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import {
  decodeFromPayloadsAtIndex,
  decodeOptionalFailureToOptionalError,
} from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { baseActivityName } from '../../shared/activity-names';

/**
 * Reads a run's event history page by page, across continue-as-new, and decodes the payloads a
 * transcript needs with the client's data converter (so it works when the connection sets a
 * codec). Needs only the Temporal server: no worker. One page of raw events is held at a time.
 */

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Activities whose inputs or results carry the conversation (or the system prompt). */
const CONVERSATION_ACTIVITIES = new Set(['callModel', 'firstModelCall', 'summarizeRun', 'assembleContext']);

/** The local activity marker the Core SDK records; its details hold `data` (JSON) and `result`. */
const LOCAL_ACTIVITY_MARKER = 'core_local_activity';

/** One decoded fact from history, in history order. */
export type HistoryRecord =
  | { kind: 'execution_started'; runId: string; input: unknown }
  | { kind: 'activity_scheduled'; eventId: string; activityType: string; input: unknown }
  | { kind: 'activity_completed'; scheduledEventId: string; activityType: string; result: unknown }
  | { kind: 'local_activity_completed'; activityType: string; result: unknown }
  | { kind: 'continued_as_new'; newRunId: string }
  /** A child workflow the run started (a subagent, for `agentWorkflow` children) and its start input. */
  | { kind: 'child_initiated'; eventId: string; workflowId: string; workflowType: string; input: unknown }
  | { kind: 'child_started'; initiatedEventId: string }
  | { kind: 'closed'; status: ExecutionStatus; result?: unknown; reason?: string };

export type ExecutionStatus = 'completed' | 'failed' | 'canceled' | 'terminated' | 'timed_out' | 'continued_as_new';

/** The first execution of the run's newest chain: where a transcript starts. */
export async function firstRunId(client: Client, workflowId: string): Promise<string> {
  const page = await historyPage(client, workflowId, '', undefined, 1);
  const started = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  const first = started?.firstExecutionRunId;
  if (!first) throw new Error(`run ${workflowId}: its history does not start with a WorkflowExecutionStarted event`);
  return first;
}

/** Every record of one execution's history, in order. */
export async function* executionRecords(
  client: Client,
  workflowId: string,
  runId: string,
): AsyncGenerator<HistoryRecord> {
  const scheduledTypes = new Map<string, string>();
  let token: Uint8Array | undefined;
  do {
    const page = await historyPage(client, workflowId, runId, token);
    for (const event of page.history?.events ?? []) {
      const record = await decodeEvent(client, runId, event, scheduledTypes);
      if (record) yield record;
    }
    token = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
  } while (token);
}

/** One page of an execution's history (an empty `runId`: the latest execution); NOT_FOUND as `WorkflowNotFoundError`. */
export async function historyPage(
  client: Client,
  workflowId: string,
  runId: string,
  nextPageToken?: Uint8Array,
  maximumPageSize?: number,
) {
  try {
    return await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      nextPageToken,
      ...(maximumPageSize ? { maximumPageSize } : {}),
    });
  } catch (err) {
    // gRPC NOT_FOUND: no run with that id in this namespace.
    if (isGrpcServiceError(err) && err.code === 5) {
      throw new WorkflowNotFoundError(
        `'${workflowId}' (namespace '${client.options.namespace}')`,
        workflowId,
        runId || undefined,
      );
    }
    throw err;
  }
}

/** A payload this client cannot decode (encrypted with a key it lacks, say): the transcript stops, saying so. */
export class UndecodablePayload extends Error {
  override readonly name = 'UndecodablePayload';
}

async function decode(client: Client, payloads: Payload[] | null | undefined): Promise<unknown> {
  if (!payloads || payloads.length === 0) return undefined;
  try {
    return await decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, payloads);
  } catch (err) {
    throw new UndecodablePayload(
      `cannot decode the run's history with this client's data converter (${err instanceof Error ? err.message : String(err)}); ` +
        'if the run was recorded with an encryption codec, set DURABLE_AGENT_CODEC_KEYS to its keys',
    );
  }
}

/** The record one history event makes for a transcript, if any (`scheduledTypes` carries activity types from scheduled to completed). */
export async function decodeEvent(
  client: Client,
  runId: string,
  event: HistoryEvent,
  scheduledTypes: Map<string, string>,
): Promise<HistoryRecord | undefined> {
  const id = String(event.eventId ?? '');
  switch (event.eventType) {
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED: {
      const a = event.workflowExecutionStartedEventAttributes;
      return { kind: 'execution_started', runId, input: await decode(client, a?.input?.payloads) };
    }
    case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
      const a = event.activityTaskScheduledEventAttributes;
      const activityType = baseActivityName(a?.activityType?.name ?? '');
      scheduledTypes.set(id, activityType);
      // Tool inputs are already in the assistant's tool_use blocks: not decoded again.
      const input = CONVERSATION_ACTIVITIES.has(activityType) ? await decode(client, a?.input?.payloads) : undefined;
      return { kind: 'activity_scheduled', eventId: id, activityType, input };
    }
    case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
      const a = event.activityTaskCompletedEventAttributes;
      const scheduledEventId = String(a?.scheduledEventId ?? '');
      const activityType = scheduledTypes.get(scheduledEventId) ?? '';
      scheduledTypes.delete(scheduledEventId);
      return {
        kind: 'activity_completed',
        scheduledEventId,
        activityType,
        result: await decode(client, a?.result?.payloads),
      };
    }
    case EventType.EVENT_TYPE_MARKER_RECORDED: {
      const a = event.markerRecordedEventAttributes;
      if (a?.markerName !== LOCAL_ACTIVITY_MARKER || a.failure) return undefined;
      const data = a.details?.['data']?.payloads;
      // The marker's own data is written by Core as plain JSON, never through the codec.
      const meta = data?.[0] ? defaultPayloadConverter.fromPayload<{ activity_type?: string }>(data[0]) : undefined;
      const result = a.details?.['result']?.payloads;
      return {
        kind: 'local_activity_completed',
        activityType: baseActivityName(meta?.activity_type ?? ''),
        result: await decode(client, result),
      };
    }
    case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED: {
      const a = event.startChildWorkflowExecutionInitiatedEventAttributes;
      return {
        kind: 'child_initiated',
        eventId: id,
        workflowId: a?.workflowId ?? '',
        workflowType: a?.workflowType?.name ?? '',
        input: await decode(client, a?.input?.payloads).catch(() => undefined),
      };
    }
    case EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED: {
      const a = event.childWorkflowExecutionStartedEventAttributes;
      return { kind: 'child_started', initiatedEventId: String(a?.initiatedEventId ?? '') };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: {
      const newRunId = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? '';
      return { kind: 'continued_as_new', newRunId };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: {
      const a = event.workflowExecutionCompletedEventAttributes;
      return { kind: 'closed', status: 'completed', result: await decode(client, a?.result?.payloads) };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: {
      const failure = event.workflowExecutionFailedEventAttributes?.failure;
      // Through the client's converter: with an encrypting failure converter the message is encoded.
      const error = await decodeOptionalFailureToOptionalError(client.options.loadedDataConverter, failure).catch(
        () => undefined,
      );
      return { kind: 'closed', status: 'failed', reason: error?.message ?? failure?.message ?? undefined };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      return { kind: 'closed', status: 'canceled' };
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: {
      const reason = event.workflowExecutionTerminatedEventAttributes?.reason;
      return { kind: 'closed', status: 'terminated', reason: reason ?? undefined };
    }
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      return { kind: 'closed', status: 'timed_out' };
    default:
      return undefined;
  }
}
