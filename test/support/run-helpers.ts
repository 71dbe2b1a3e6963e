import type { temporal } from '@temporalio/proto';
import type { Message, ToolResultBlock } from '../../src/shared';
import { runResultOfFailure, stateQuery, type AgentRunResult, type AgentRunState } from '../../src/shared';

/** Anything that answers the `state` query: a workflow handle. */
interface Queryable {
  query(def: typeof stateQuery): Promise<AgentRunState>;
}

/**
 * Polls the run's `state` query until `predicate` holds. Queries that fail (the run has not started
 * yet) are retried until the deadline.
 */
export async function waitForState(
  handle: Queryable,
  predicate: (state: AgentRunState) => boolean,
  timeoutMs = 20_000,
): Promise<AgentRunState> {
  const deadline = Date.now() + timeoutMs;
  let last: AgentRunState | string = 'no answer yet';
  for (;;) {
    try {
      const state = await handle.query(stateQuery);
      if (predicate(state)) return state;
      last = state;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`state never matched; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The tool_result blocks of a user message (throws if it is not one). */
export function toolResults(message: Message | undefined): ToolResultBlock[] {
  if (!message || typeof message.content === 'string') throw new Error('expected a user message of tool results');
  return message.content.filter((b): b is ToolResultBlock => b.type === 'tool_result');
}

/** Polls `fn` until `check` stops throwing (visibility, the Web UI and runs fill in over time). */
export async function eventually<T>(fn: () => Promise<T>, check: (value: T) => void, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    try {
      check(value);
      return value;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The AgentRunResult of a finished run, whatever its exit reason: completed runs return it, runs
 * that ended `failed` fail the workflow with `DurableAgent.RunFailed` and carry it in the details.
 */
export async function runResult(handle: { result(): Promise<AgentRunResult> }): Promise<AgentRunResult> {
  try {
    return await handle.result();
  } catch (err) {
    const result = runResultOfFailure(err);
    if (result) return result;
    throw err;
  }
}

/** An event's type as the Web UI spells it, from its attributes (`timerStartedEventAttributes`: TIMER_STARTED). */
export function eventType(event: temporal.api.history.v1.IHistoryEvent): string {
  const key = Object.keys(event).find((k) => k.endsWith('EventAttributes') && event[k as keyof typeof event]) ?? '';
  return key
    .replace(/EventAttributes$/, '')
    .replace(/[A-Z]/g, (c) => `_${c}`)
    .toUpperCase();
}
