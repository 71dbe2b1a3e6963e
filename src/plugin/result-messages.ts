import type { Client } from '@temporalio/client';
import { getRun, runResult } from '../client';
import type { AgentRunResult, Message } from '../shared';
import { readTranscript } from '../client/transcript';

/**
 * A run's whole conversation: every message of every execution, read from history (no worker
 * needed), whatever the exit reason. Runs recorded before the final messages were kept lack the last
 * turn's tool results. `AgentRun.result({ messages: true })` and `result <id> --json --messages`.
 */
export async function runMessages(client: Client, workflowId: string): Promise<Message[]> {
  return (await readTranscript(client, workflowId)).messages;
}

/** The run's `AgentRunResult` (waiting for it) with its whole conversation. */
export async function resultWithMessages(
  client: Client,
  workflowId: string,
): Promise<AgentRunResult & { messages: Message[] }> {
  const result = await runResult(getRun(client, workflowId));
  return { ...result, messages: await runMessages(client, workflowId) };
}
