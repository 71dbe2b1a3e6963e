import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import type { AgentHandle } from './handle';
import { parseModelProgress, type StreamTail } from '../shared/live-progress';
import { baseActivityName } from '../shared/activity-names';

/**
 * The in-flight model call's streamed text as any client reads it: from `describe()`'s pending
 * activities (docs/live-output.md). The library's `AgentRun.follow({ partial: true })` and the
 * `includePartial` page read it here; the CLI's followers do the same.
 */

/** The model call activities whose streamed text followers show (a run's first call is `firstModelCall`). */
const MODEL_CALL_ACTIVITIES = new Set(['callModel', 'firstModelCall']);

/** What the in-flight model call has streamed so far, as its newest heartbeat details say. */
export interface LiveSnapshot {
  /** Names the call: execution run id and activity id (ids restart after continue-as-new). */
  call: string;
  attempt: number;
  thinking?: StreamTail;
  text?: StreamTail;
}

/**
 * The streamed answer of the run's in-flight model call, read from `describe()`'s pending
 * activities (heartbeat details: server state, not history; decoded with the client's data
 * converter, so an encrypting codec works). Undefined when no model call is pending or it has
 * streamed nothing yet.
 */
export async function readLiveSnapshot(handle: AgentHandle): Promise<LiveSnapshot | undefined> {
  return liveSnapshotOf(await handle.describe(), handle.client.options.loadedDataConverter);
}

/** The same, from a description already read. */
export async function liveSnapshotOf(
  description: WorkflowExecutionDescription,
  converter: LoadedDataConverter,
): Promise<LiveSnapshot | undefined> {
  const pending = description.raw.pendingActivities ?? [];
  const call = pending.find((a) => MODEL_CALL_ACTIVITIES.has(baseActivityName(a.activityType?.name ?? '')));
  const payloads = call?.heartbeatDetails?.payloads;
  if (!call || !payloads?.length) return undefined;
  let details: unknown[];
  try {
    details = await decodeArrayFromPayloads(converter, payloads);
  } catch {
    // Details this client cannot decode (another codec key): no live text, the events still come.
    return undefined;
  }
  const progress = parseModelProgress(details[0]);
  if (!progress) return undefined;
  return { call: `${description.runId}/${call.activityId ?? ''}`, attempt: call.attempt ?? 1, ...progress };
}
