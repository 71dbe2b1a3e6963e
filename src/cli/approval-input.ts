import type { WorkflowClient } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import type { PendingApproval, RunEvent } from '../shared';
import { INPUT_PREVIEW_CHARS, previewInput } from '../shared';
import { previewWasCut } from './approval-view';

/**
 * The run records a pending approval's input cut to INPUT_PREVIEW_CHARS a field (in its events and
 * its state). An operator must see the whole of what would run, so when a field was cut the CLI
 * reads the model's own tool call from the run's history (newest events first: it is the latest
 * model call's answer) and uses it, but only when it is the very input the run recorded, cut the
 * same way. A hook that rewrote the input, or a call the run parsed from text, leaves the cut
 * record in place, and the CLI says so.
 */

const EventType = temporal.api.enums.v1.EventType;

/** How many history events back the lookup goes: the model call that asked is among the last few. */
const MAX_EVENTS_SCANNED = 300;
const PAGE_SIZE = 100;

/** The whole input of tool call `toolUseId` when history holds one matching `recorded`; else undefined. */
export async function wholeToolInput(
  client: WorkflowClient,
  workflowId: string,
  toolUseId: string,
  recorded: unknown,
): Promise<unknown> {
  const runId = (await client.getHandle(workflowId).describe()).runId;
  let token: Uint8Array | undefined;
  let scanned = 0;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      maximumPageSize: PAGE_SIZE,
      ...(token ? { nextPageToken: token } : {}),
    });
    for (const event of page.history?.events ?? []) {
      if (++scanned > MAX_EVENTS_SCANNED) return undefined;
      if (event.eventType !== EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) continue;
      const payloads = event.activityTaskCompletedEventAttributes?.result?.payloads;
      if (!payloads?.length) continue;
      const result = await decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, payloads).catch(
        () => undefined,
      );
      const input = toolUseInput(result, toolUseId);
      if (input === undefined) continue;
      return sameRecord(previewInput(input.value, INPUT_PREVIEW_CHARS), recorded) ? input.value : undefined;
    }
    token = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (token);
  return undefined;
}

/**
 * The input of the `tool_use` block with this id in a model call's answer, if it has one. A run's
 * first call (`firstModelCall`, 0.3.0) holds its answer in `response`.
 */
function toolUseInput(result: unknown, toolUseId: string): { value: unknown } | undefined {
  const output = result as { content?: unknown; response?: { content?: unknown } } | null | undefined;
  const content = output?.content ?? output?.response?.content;
  if (!Array.isArray(content)) return undefined;
  for (const block of content as unknown[]) {
    const b = block as { type?: unknown; id?: unknown; input?: unknown } | null;
    if (b?.type === 'tool_use' && b.id === toolUseId) return { value: b.input };
  }
  return undefined;
}

function sameRecord(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The same approvals with each cut input replaced by the whole one from history, where it can be
 * read. Any failure leaves the cut record (which the CLI then marks as cut).
 */
export async function withWholeInputs<T extends Pick<PendingApproval, 'toolUseId' | 'input' | 'subagent'>>(
  client: WorkflowClient,
  workflowId: string,
  approvals: T[],
): Promise<T[]> {
  return Promise.all(
    approvals.map(async (a) => {
      if (!previewWasCut(a.input)) return a;
      // A descendant's call is in the descendant's history (only a run under this one is read).
      const child = a.subagent?.workflowId;
      const where = child?.startsWith(`${workflowId}.`) ? child : workflowId;
      const whole = await wholeToolInput(client, where, a.toolUseId, a.input).catch(() => undefined);
      return whole === undefined ? a : { ...a, input: whole };
    }),
  );
}

/** A page of events with each approval request's cut input made whole where history has it. */
export async function withWholeApprovalInputs(
  client: WorkflowClient,
  workflowId: string,
  events: RunEvent[],
): Promise<RunEvent[]> {
  if (!events.some((e) => e.kind === 'approval_requested' && previewWasCut(e.input))) return events;
  const requests = events.filter((e) => e.kind === 'approval_requested');
  const whole = new Map((await withWholeInputs(client, workflowId, requests)).map((e) => [e.seq, e]));
  return events.map((e) => whole.get(e.seq) ?? e);
}
