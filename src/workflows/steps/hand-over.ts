import { workflowInfo } from '@temporalio/workflow';
import {
  CARRIED_LAST_TEXT_BYTES,
  CARRIED_TEXT_PREFIX_BYTES,
  cutBytes,
  type AgentRunInput,
  type RunContinuation,
} from '../../shared';
import type { Conversation } from '../run/conversation';
import type { EventLog } from '../run/events';
import type { Inbox } from '../run/inbox';
import type { RunState } from '../run/run-state';

/**
 * Temporal suggests a hand-over: the history grew large, or a newer Worker Deployment Version became
 * the target of this pinned run (it moves there by continuing as new; docs/upgrading.md).
 */
export function handOverSuggested(): boolean {
  const now = workflowInfo();
  return now.continueAsNewSuggested || now.targetWorkerDeploymentVersionChanged;
}

/** The run continues as new when Temporal suggests it or when the run's own limits say so. */
export function shouldContinueAsNew(limits: AgentRunInput['continueAsNewAfter']): boolean {
  const now = workflowInfo();
  return (
    handOverSuggested() ||
    (limits?.events !== undefined && now.historyLength >= limits.events) ||
    (limits?.bytes !== undefined && now.historySize >= limits.bytes)
  );
}

/**
 * What the next execution needs to go on. Every part is bounded (the conversation by its hard cap,
 * events by count and bytes, pending messages by their limit), so the continue-as-new input stays
 * under Temporal's payload limit: see the sum in constants.ts.
 */
export function carriedState(parts: {
  conversation: Conversation;
  state: RunState;
  events: EventLog;
  inbox: Inbox;
  workerQueue: string | undefined;
  /** Set when a session hands over while it waits for input. */
  waiting?: { idleDeadline: number };
  /** What run start prepared: assembled once per run, carried along. */
  carriedContext?: Pick<RunContinuation, 'context' | 'hookEvents' | 'stopBlocks'>;
}): RunContinuation {
  const { state } = parts;
  return {
    conversation: parts.conversation.snapshot(),
    iteration: state.iteration,
    usage: state.usage,
    costUsd: state.costUsd,
    ...(state.lastStopReason !== undefined ? { lastStopReason: state.lastStopReason } : {}),
    lastAssistantText: cutBytes(state.lastAssistantText, CARRIED_LAST_TEXT_BYTES),
    ...parts.events.carried(),
    continuations: state.continuations,
    compactions: state.compactions,
    ...(state.lastCompactionIteration !== undefined ? { lastCompactionIteration: state.lastCompactionIteration } : {}),
    needsCompaction: state.needsCompaction,
    pendingMessages: parts.inbox.list(),
    awaitingInput: parts.waiting !== undefined,
    ...(parts.waiting ? { idleDeadline: parts.waiting.idleDeadline } : {}),
    ...(parts.workerQueue ? { workerQueue: parts.workerQueue } : {}),
    ...(parts.carriedContext ?? {}),
    ...(parts.carriedContext ? { turnIterations: state.turnIterations } : {}),
    ...(state.textPrefix ? { textPrefix: cutBytes(state.textPrefix, CARRIED_TEXT_PREFIX_BYTES) } : {}),
  };
}
