import type { Client } from '@temporalio/client';
import { getRun, runResult } from '../client';
import type { AgentRunResult, Message } from '../shared';
import { readTranscript } from './transcript';

/**
 * `result <id> --json --messages`: the run's `AgentRunResult` with its whole conversation (every
 * message of every execution, from history: no worker needed), whatever the exit reason. Runs
 * recorded before the final messages were kept lack the last turn's tool results.
 */
export async function resultWithMessages(
  client: Client,
  workflowId: string,
): Promise<AgentRunResult & { messages: Message[] }> {
  const result = await runResult(getRun(client, workflowId));
  const { messages } = await readTranscript(client, workflowId);
  return { ...result, messages };
}
