import { WorkflowNotFoundError } from '@temporalio/client';
import { TASK_TOOL_NAME } from '../../shared/subagents';
import { WORKFLOW_TYPE } from '../../shared';
import type { HistoryRecord } from './history';
import type { Transcript } from './rebuild';

/**
 * Subagents in a transcript (docs/subagents.md#watching-a-tree): each `agentWorkflow` child the run
 * started is read from its own history and nested under the `task` call it answers. The tree is
 * bounded (MAX_TREE_DEPTH levels, MAX_TREE_RUNS runs); a child seen before (a cycle), one that no
 * longer exists or one past a bound is listed with a note instead of its transcript.
 */

export const MAX_TREE_DEPTH = 6;
export const MAX_TREE_RUNS = 50;

export interface TranscriptSubagent {
  workflowId: string;
  /** The `task` call it answers, when the parent's messages show which; else null. */
  toolUseId: string | null;
  agent?: string;
  description?: string;
  /** Its own transcript (with its own `subagents`), unless `note` says why not. */
  transcript?: Transcript;
  note?: string;
}

/** Children the run started and that did start, in history order. */
export class ChildRecords {
  private readonly initiated = new Map<string, { workflowId: string; workflowType: string; input: unknown }>();
  readonly started: { workflowId: string; input: unknown }[] = [];

  add(record: HistoryRecord): void {
    if (record.kind === 'child_initiated') {
      this.initiated.set(record.eventId, record);
    } else if (record.kind === 'child_started') {
      const child = this.initiated.get(record.initiatedEventId);
      // Only agent runs are subagents; a child that failed to start (its id taken) has no started event.
      if (child && child.workflowType === WORKFLOW_TYPE && child.workflowId) this.started.push(child);
    }
  }
}

interface TaskCall {
  id: string;
  input: Record<string, unknown>;
}

function taskCalls(t: Transcript): TaskCall[] {
  const calls: TaskCall[] = [];
  for (const message of t.messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      const b = block as { type: string; name?: unknown; id?: unknown; input?: unknown };
      if (b.type === 'tool_use' && b.name === TASK_TOOL_NAME && typeof b.id === 'string') {
        const input = b.input !== null && typeof b.input === 'object' ? (b.input as Record<string, unknown>) : {};
        calls.push({ id: b.id, input });
      }
    }
  }
  return calls;
}

/** Strings in a value, two levels deep (a child's input may carry its task call's id). */
function strings(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value];
  if (depth >= 2 || value === null || typeof value !== 'object') return [];
  return Object.values(value as Record<string, unknown>).flatMap((v) => strings(v, depth + 1));
}

/**
 * Which task call started each child: the call whose id the child's input carries, else the call
 * whose prompt is the child's prompt, else the n-th task call for a child id ending `.task-<n>`.
 */
export function matchChildren(
  parent: Transcript,
  children: readonly { workflowId: string; input: unknown }[],
): { workflowId: string; toolUseId: string | null; agent?: string; description?: string }[] {
  const calls = taskCalls(parent);
  const taken = new Set<string>();
  const take = (call: TaskCall | undefined) => (call && !taken.has(call.id) ? (taken.add(call.id), call) : undefined);
  return children.map((child) => {
    const carried = new Set(strings(child.input));
    const prompt = (child.input as { prompt?: unknown } | null)?.prompt;
    const n = /\.task-(\d+)$/.exec(child.workflowId)?.[1];
    const call =
      take(calls.find((c) => carried.has(c.id) && !taken.has(c.id))) ??
      take(calls.find((c) => typeof prompt === 'string' && c.input['prompt'] === prompt && !taken.has(c.id))) ??
      (n !== undefined ? take(calls[Number(n) - 1]) : undefined);
    const agent = call?.input['agent'];
    const description = call?.input['description'];
    return {
      workflowId: child.workflowId,
      toolUseId: call?.id ?? null,
      ...(typeof agent === 'string' ? { agent } : {}),
      ...(typeof description === 'string' ? { description } : {}),
    };
  });
}

export type ReadRun = (workflowId: string) => Promise<{ transcript: Transcript; children: ChildRecords }>;

/** Reads the run and its subagents' transcripts, depth first, within the bounds. */
export async function readTree(read: ReadRun, workflowId: string): Promise<Transcript> {
  const seen = new Set<string>([workflowId]);
  const budget = { runs: MAX_TREE_RUNS - 1 };
  const { transcript, children } = await read(workflowId);
  await nest(read, transcript, children, 1, seen, budget);
  return transcript;
}

async function nest(
  read: ReadRun,
  parent: Transcript,
  children: ChildRecords,
  depth: number,
  seen: Set<string>,
  budget: { runs: number },
): Promise<void> {
  if (children.started.length === 0) return;
  const subagents: TranscriptSubagent[] = [];
  for (const child of matchChildren(parent, children.started)) {
    const entry: TranscriptSubagent = { ...child };
    subagents.push(entry);
    const again = `durable-agent transcript ${child.workflowId}`;
    if (seen.has(child.workflowId)) {
      entry.note = 'shown already (the tree has a cycle)';
    } else if (depth > MAX_TREE_DEPTH) {
      entry.note = `deeper than ${MAX_TREE_DEPTH} levels: read it with ${again}`;
    } else if (budget.runs <= 0) {
      entry.note = `more than ${MAX_TREE_RUNS} runs in the tree: read it with ${again}`;
    } else {
      seen.add(child.workflowId);
      budget.runs--;
      try {
        const got = await read(child.workflowId);
        entry.transcript = got.transcript;
        await nest(read, got.transcript, got.children, depth + 1, seen, budget);
      } catch (error) {
        entry.note =
          error instanceof WorkflowNotFoundError
            ? 'no such run (deleted, or past the retention period)'
            : `cannot be read: ${(error as Error).message?.split('\n')[0] ?? String(error)}`;
      }
    }
  }
  parent.subagents = subagents;
}
