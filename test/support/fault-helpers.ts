import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AgentRunInput, ToolResultBlock } from '../../src/shared';
import { WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import type { RecordedRequest } from './fake-anthropic';
import { baseActivityName } from '../../src/shared/activity-names';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns something truthy; fails with `what` after `timeoutMs`. */
export async function waitUntil<T>(
  probe: () => T | Promise<T>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** A file's lines, or none when it does not exist yet. */
export async function linesOf(file: string): Promise<string[]> {
  try {
    return (await fs.readFile(file, 'utf8')).split('\n').filter((l) => l.length > 0);
  } catch {
    return [];
  }
}

export const countOf = (lines: string[], text: string) => lines.filter((l) => l === text).length;

/**
 * Which model turn a request to the Messages API is: turn k sends 2k-1 messages (the prompt, then
 * an assistant turn and a user turn per earlier iteration).
 */
export function turnOf(request: RecordedRequest): number {
  const messages = (request.body as { messages?: unknown[] } | undefined)?.messages ?? [];
  return (messages.length + 1) / 2;
}

/** How many requests each turn took: `[1, 1]` is two turns, none repeated. */
export function requestsPerTurn(requests: RecordedRequest[]): number[] {
  const counts: number[] = [];
  for (const request of requests) {
    const turn = turnOf(request);
    counts[turn - 1] = (counts[turn - 1] ?? 0) + 1;
  }
  return Array.from(counts, (c) => c ?? 0);
}

/** The tool_result blocks a request carries in its last (user) message. */
export function toolResultsIn(request: RecordedRequest | undefined): ToolResultBlock[] {
  const messages = (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages;
  const last = messages?.[messages.length - 1];
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as ToolResultBlock[]).filter((b) => b.type === 'tool_result');
}

/** Text of a tool_result's content, whether a string or text blocks. */
export function resultText(block: ToolResultBlock | undefined): string {
  const content = (block as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: { text?: string }) => c.text ?? '').join('');
  return '';
}

let counter = 0;
/** Starts a run of the real workflow on `taskQueue`. */
export function startAgentRun(
  client: Client,
  taskQueue: string,
  input: AgentRunInput,
  label = 'fault',
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentWorkflow>> {
  return client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `${label}-${Date.now()}-${++counter}`,
    args: [input],
  });
}

/** Activity types of the completed activities in a run's history, in order. */
export async function completedActivities(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, string>();
  const done: string[] = [];
  for (const event of history.events ?? []) {
    const s = event.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name) scheduled.set(String(event.eventId), baseActivityName(s.activityType.name));
    const c = event.activityTaskCompletedEventAttributes;
    if (c) done.push(scheduled.get(String(c.scheduledEventId)) ?? '?');
  }
  return done;
}

export const workspaceFile = (workspace: string, name: string) => path.join(workspace, name);
