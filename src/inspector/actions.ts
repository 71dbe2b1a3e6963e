import type { Client } from '@temporalio/client';
import { getRun } from '../client';
import { MAX_MESSAGE_BYTES } from '../shared';
import { decideCommand, endCommand, interruptCommand, sendCommand } from '../cli/steer-commands';
import { BadRequest } from './errors';

/**
 * The page's buttons, as the CLI's commands: **Approve**, **Deny** (updates, decided on the run that
 * shows the call, which is the parent for a subagent's call), **Send**, **End session** (updates) and
 * **Interrupt** (the signal). Each body is checked as the run's handlers check it, so a bad one is
 * refused here with the same rule instead of reaching the run.
 */

export const ACTIONS = ['approve', 'deny', 'send', 'end', 'interrupt'] as const;
export type ActionName = (typeof ACTIONS)[number];

/** The workflow's own bounds (src/workflows/run/approvals.ts, src/workflows/handlers.ts). */
const MAX_TOOL_USE_ID_CHARS = 256;
const MAX_DENY_REASON_CHARS = 2_000;
const MAX_INTERRUPT_REASON_CHARS = 1_000;

const KEYS: Record<ActionName, readonly string[]> = {
  approve: ['toolUseId'],
  deny: ['toolUseId', 'reason'],
  send: ['message'],
  end: [],
  interrupt: ['reason'],
};

export function isAction(name: string): name is ActionName {
  return (ACTIONS as readonly string[]).includes(name);
}

/** Checks an action's body; returns it typed, or throws `BadRequest` saying what the action takes. */
export function validateAction(action: ActionName, body: unknown): Record<string, string | undefined> {
  const accepted = KEYS[action].length ? `{ ${KEYS[action].join(', ')} }` : '{}';
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest(`${action} takes a JSON object ${accepted}`);
  }
  const extra = Object.keys(body).filter((k) => !KEYS[action].includes(k));
  if (extra.length) throw new BadRequest(`${action} takes ${accepted}; unknown: ${extra.slice(0, 5).join(', ')}`);
  const b = body as Record<string, unknown>;
  if (action === 'approve' || action === 'deny') {
    if (typeof b['toolUseId'] !== 'string' || !b['toolUseId'] || b['toolUseId'].length > MAX_TOOL_USE_ID_CHARS) {
      throw new BadRequest(`toolUseId must be a non-empty string of at most ${MAX_TOOL_USE_ID_CHARS} characters`);
    }
  }
  const reasonLimit = action === 'interrupt' ? MAX_INTERRUPT_REASON_CHARS : MAX_DENY_REASON_CHARS;
  if (b['reason'] !== undefined && (typeof b['reason'] !== 'string' || b['reason'].length > reasonLimit)) {
    throw new BadRequest(`reason must be a string of at most ${reasonLimit} characters`);
  }
  if (action === 'send') {
    if (typeof b['message'] !== 'string' || !b['message'].trim())
      throw new BadRequest('message must be a non-empty string');
    const size = Buffer.byteLength(b['message'], 'utf8');
    if (size > MAX_MESSAGE_BYTES)
      throw new BadRequest(`message is ${size} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes`);
  }
  return b as Record<string, string | undefined>;
}

/** Levels of parents looked up for a subagent's approval (the subagent tree's own depth bound is 6). */
const MAX_PARENT_LEVELS = 8;

/** The run at the top of the subagent tree `workflowId` is in (itself when it has no parent). */
async function topRun(client: Client, workflowId: string): Promise<string> {
  let id = workflowId;
  for (let level = 0; level < MAX_PARENT_LEVELS; level++) {
    const parent = (await getRun(client, id).describe()).parentExecution?.workflowId;
    if (!parent) break;
    id = parent;
  }
  return id;
}

/** Runs the action as its CLI command does; resolves to the sentence the CLI prints. */
export async function runAction(
  client: Client,
  workflowId: string,
  action: ActionName,
  body: unknown,
): Promise<string> {
  const b = validateAction(action, body);
  let said = '';
  const context = { client, say: (line: string) => void (said = line) };
  switch (action) {
    case 'approve':
    case 'deny':
      // A subagent's call is decided on the run at the top of its tree, as `approve` on the parent does.
      await decideCommand(
        context,
        await topRun(client, workflowId),
        b['toolUseId']!,
        action === 'approve',
        b['reason'],
      );
      break;
    case 'send':
      await sendCommand(context, workflowId, b['message']!);
      break;
    case 'end':
      await endCommand(context, workflowId);
      break;
    case 'interrupt':
      await interruptCommand(context, workflowId, b['reason']);
      break;
  }
  return said;
}
