import {
  Client,
  Connection,
  WorkflowNotFoundError,
  type WorkflowHandle,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { temporalConfig, type TemporalConfig } from './config';
import type { AgentRunInput, AgentRunResult, AgentRunState, EventsPage } from './shared';
import type { ApprovalResult, SendMessageResult } from './shared';
import {
  BUILTIN_TOOL_NAMES,
  DEFAULTS,
  DEFAULT_ANTHROPIC_MODEL,
  WORKFLOW_TYPE,
  approveToolUpdate,
  denyToolUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
  stateQuery,
} from './shared';
import type { agentWorkflow } from './workflows';

export type AgentHandle = WorkflowHandle<typeof agentWorkflow>;

export async function connectClient(config: TemporalConfig = temporalConfig()): Promise<Client> {
  const connection = await Connection.connect({ address: config.address });
  return new Client({ connection, namespace: config.namespace });
}

/** A readable, sortable id: `agent-20261122-031500-k3x9`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `agent-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * The run's fixed settings as markdown, shown as the workflow's static details in the Web UI. What
 * the input leaves out is shown as the workflow will resolve it (model, iterations), or as left to
 * the worker (workspace).
 */
export function runDetails(input: AgentRunInput): string {
  const limits = [
    `${input.maxIterations ?? DEFAULTS.maxIterations} iterations`,
    input.maxBudgetUsd !== undefined ? `budget $${input.maxBudgetUsd}` : 'no budget limit',
    `${input.maxTokens ?? DEFAULTS.maxTokens} max tokens per model call`,
  ];
  const modes = [
    input.session ? 'session (stays open for follow-up messages)' : undefined,
    input.approveMutating ? 'mutating tools need approval' : undefined,
    input.requireDoneTool ? 'ends when the model calls `done`' : undefined,
  ].filter((m): m is string => m !== undefined);
  return [
    `- **Model:** \`${input.model ?? DEFAULT_ANTHROPIC_MODEL}\``,
    `- **Limits:** ${limits.join(' · ')}`,
    `- **Workspace:** ${input.workspace ? `\`${input.workspace}\`` : "the worker's working directory"}`,
    `- **Tools:** ${(input.tools ?? BUILTIN_TOOL_NAMES).join(', ')}`,
    ...(modes.length ? [`- **Mode:** ${modes.join(' · ')}`] : []),
  ].join('\n');
}

export async function startRun(
  client: Client,
  input: AgentRunInput,
  options: { workflowId: string; taskQueue: string },
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentWorkflow>> {
  return client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    args: [input],
    taskQueue: options.taskQueue,
    workflowId: options.workflowId,
    staticSummary: input.prompt.split('\n')[0]?.slice(0, 200),
    staticDetails: runDetails(input),
  });
}

export function getRun(client: Client, workflowId: string): AgentHandle {
  return client.workflow.getHandle<typeof agentWorkflow>(workflowId);
}

export const queryState = (handle: AgentHandle): Promise<AgentRunState> => handle.query(stateQuery);
export const queryEvents = (handle: AgentHandle, after: number): Promise<EventsPage> =>
  handle.query(eventsQuery, { after });
export const interruptRun = (handle: AgentHandle, reason?: string): Promise<void> =>
  handle.signal(interruptSignal, reason !== undefined ? { reason } : {});
export const runResult = (handle: AgentHandle): Promise<AgentRunResult> => handle.result();

/** Adds a user message to a run (the `sendMessage` update; its validator rejects ended runs and empty text). */
export const sendMessage = (handle: AgentHandle, message: string): Promise<SendMessageResult> =>
  handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
export const approveTool = (handle: AgentHandle, toolUseId: string): Promise<ApprovalResult> =>
  handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId }] });
export const denyTool = (handle: AgentHandle, toolUseId: string, reason?: string): Promise<ApprovalResult> =>
  handle.executeUpdate(denyToolUpdate, { args: [reason !== undefined ? { toolUseId, reason } : { toolUseId }] });

export { WorkflowNotFoundError };
