import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AgentRunState, EventsPage, EventsQueryInput } from './run';

/*
 * The handlers' wire names and argument shapes are what outside clients use (docs/contracts.md):
 * renaming one is a breaking change.
 */

export interface InterruptInput {
  reason?: string;
}

/** Stops the run: cancels in-flight model and tool activities and returns what the run has. */
export const interruptSignal = defineSignal<[InterruptInput]>('interrupt');
/** The run's turn, usage, cost and running tools. Pure and synchronous. */
export const stateQuery = defineQuery<AgentRunState>('state');
/** Progress events after a cursor, for live following. */
export const eventsQuery = defineQuery<EventsPage, [EventsQueryInput]>('events');

export interface SendMessageInput {
  message: string;
}
export interface SendMessageResult {
  /** Messages waiting for the next iteration boundary, this one included. */
  pendingMessages: number;
  iteration: number;
}
/** Adds a user message; the run takes it at its next iteration boundary (a session waiting for input at once). */
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');

export interface ApprovalInput {
  toolUseId: string;
  reason?: string;
}
export interface ApprovalResult {
  toolUseId: string;
  name: string;
  approved: boolean;
}
/** Lets a tool call that waits for approval run. */
export const approveToolUpdate = defineUpdate<ApprovalResult, [ApprovalInput]>('approveTool');
/** Refuses a tool call that waits for approval; the model sees an is_error result with the reason. */
export const denyToolUpdate = defineUpdate<ApprovalResult, [ApprovalInput]>('denyTool');

export type EndSessionInput = Record<string, never>;
export interface EndSessionResult {
  /** The status the run ends with (`completed`). */
  status: 'completed';
}
/** Ends a session that waits for input: the run completes with its last answer. */
export const endSessionUpdate = defineUpdate<EndSessionResult, [EndSessionInput]>('endSession');
