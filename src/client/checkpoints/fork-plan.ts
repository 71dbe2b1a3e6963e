import type { Client } from '@temporalio/client';
import * as path from 'node:path';
import type { ContentBlock, Message } from '../../shared/messages';
import type { ForkOrigin } from '../../shared/fork';
import { parseRunInput, type AgentRunInput } from '../../shared/run';
import { CheckpointUnavailable } from '../errors';
import { readRunHistory, type RunHistory } from './run-history';
import { checkpointAt, checkpointedTurns, describeTurns, turnEnd } from './turns';

/**
 * A fork's start input, from the original run's history (docs/checkpoints.md#fork): its settings,
 * the conversation up to the end of turn N (the answer and, when it called tools, their results), the
 * checkpoint that holds turn N's files, and where it came from. The original run is only read.
 */

export interface ForkRequest {
  /** The turn to fork at: 0 (the run's start) to the run's last turn. */
  atTurn: number;
  /** The fork's next user message; needed when turn N ended with the model's answer. */
  prompt?: string;
  model?: string;
  /** The fork's workspace (a path on the worker); default: `<the original's parent>/<fork id>`. */
  workspace?: string;
}

export interface ForkPlan {
  input: AgentRunInput;
  origin: ForkOrigin;
  checkpointId: string;
}

/** Input fields a fork does not take from the original: its own, or what only the original's start meant. */
const NOT_INHERITED = new Set([
  'prompt',
  'workspace',
  'resume',
  'subagent',
  'toolChoice',
  'conversation',
  'restoreFrom',
  'forkedFrom',
]);

export class ForkRefused extends CheckpointUnavailable {
  override name = 'ForkRefused';
}

export async function planFork(
  client: Client,
  workflowId: string,
  request: ForkRequest,
  forkId: string,
): Promise<ForkPlan> {
  return planForkFrom(await readRunHistory(client, workflowId), request, forkId);
}

export function planForkFrom(history: RunHistory, request: ForkRequest, forkId: string): ForkPlan {
  const n = request.atTurn;
  const turns = () => `Turns that can be forked: ${describeTurns(checkpointedTurns(history))}.`;
  if (!Number.isSafeInteger(n) || n < 0 || n > history.lastTurn) {
    throw new ForkRefused(`run ${history.workflowId} has turns 0 to ${history.lastTurn}, not ${n}. ${turns()}`);
  }
  const at = checkpointAt(history, n);
  if (!at.ok) throw new ForkRefused(`turn ${n} of run ${history.workflowId} cannot be forked: ${at.why}. ${turns()}`);
  const original = history.input ?? {};
  const originalPrompt = typeof original['prompt'] === 'string' ? original['prompt'] : '';
  const prompt = request.prompt ?? originalPrompt;
  const conversation = n === 0 ? undefined : conversationAt(history, n, request.prompt);
  const inherited = Object.fromEntries(Object.entries(original).filter(([k]) => !NOT_INHERITED.has(k)));
  const origin: ForkOrigin = { workflowId: history.workflowId, runId: history.firstRunId, turn: n };
  const input = {
    ...inherited,
    prompt,
    ...(request.model !== undefined ? { model: request.model } : {}),
    workspace: request.workspace ?? defaultWorkspace(history, forkId),
    restoreFrom: { checkpointId: at.ref.id },
    forkedFrom: origin,
    ...(conversation ? { conversation } : {}),
  } as AgentRunInput;
  const parsed = parseRunInput(input);
  if (!parsed.ok) throw new ForkRefused(`the fork's input is refused: ${parsed.error}`);
  return { input, origin, checkpointId: at.ref.id };
}

/** The original's first `n` turns as the model saw them, and the fork's next message after them. */
function conversationAt(history: RunHistory, n: number, next: string | undefined): Message[] {
  const { messages, compactions } = history.transcript;
  const end = turnEnd(messages, history.answers, n);
  if (end === undefined) {
    throw new ForkRefused(
      `turn ${n}'s answer could not be found in the run's history, so its conversation cannot be rebuilt`,
    );
  }
  // After a compaction the model saw the compacted conversation: the fork starts from what it saw.
  let start = 0;
  for (const c of compactions) if (c.atIndex < end) start = c.atIndex;
  const taken = messages.slice(start, end).map((m) => ({ ...m }));
  const last = taken[taken.length - 1];
  if (next === undefined) {
    if (last?.role !== 'user') {
      throw new ForkRefused(`turn ${n} ended with the model's answer: give the fork's next message with --prompt`);
    }
    return taken;
  }
  if (last?.role === 'user') {
    const blocks: ContentBlock[] =
      typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
    taken[taken.length - 1] = { role: 'user', content: [...blocks, { type: 'text', text: next }] };
  } else {
    taken.push({ role: 'user', content: next });
  }
  return taken;
}

function defaultWorkspace(history: RunHistory, forkId: string): string {
  const original =
    history.workspace ?? (typeof history.input?.['workspace'] === 'string' ? history.input['workspace'] : undefined);
  if (!original || !path.isAbsolute(original)) {
    throw new ForkRefused(
      `the run's workspace is not recorded in its history as an absolute path: give the fork's with --workspace`,
    );
  }
  return path.join(path.dirname(original), forkId);
}
