import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { AgentRunState, EventsPage, EventsQueryInput } from './run';

export interface InterruptInput {
  reason?: string;
}

/** Stops the run: cancels in-flight model and tool activities and returns what the run has. */
export const interruptSignal = defineSignal<[InterruptInput]>('interrupt');
/** The run's turn, usage, cost and running tools. Pure and synchronous. */
export const stateQuery = defineQuery<AgentRunState>('state');
/** Progress events after a cursor, for live following. */
export const eventsQuery = defineQuery<EventsPage, [EventsQueryInput]>('events');
