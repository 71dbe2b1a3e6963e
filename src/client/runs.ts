import {
  type Client,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type WorkflowHandleWithFirstExecutionRunId,
} from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import type { AgentRunInput, AgentRunResult, AgentRunState, EventsPage } from '../shared';
import { wireInput, type RunStartInput } from './typed-output';
import { readLiveSnapshot } from './live-snapshot';
import { RunEndedError } from './errors';
import type { agentWorkflow } from '../workflows';
import type { AgentHandle } from './handle';
import { ErrorTypes } from '../shared/constants';

export { RunEndedError, type EndedWithoutResult } from './errors';
export type { AgentHandle } from './handle';
import type { PartialOutput } from '../shared/live-progress';
import { describeRunTools } from '../shared/subagents';
import type { ApprovalResult, EndSessionResult, SendMessageResult } from '../shared';
import { FORKED_FROM_MEMO } from '../shared/fork';
import {
  BUILTIN_TOOL_NAMES,
  CANCELLED_RESULT_MEMO,
  DEFAULTS,
  DEFAULT_ANTHROPIC_MODEL,
  WORKFLOW_TYPE,
  approveToolUpdate,
  denyToolUpdate,
  endSessionUpdate,
  eventsQuery,
  forkedFromSearchAttribute,
  interruptSignal,
  sendMessageUpdate,
  startSearchAttributes,
  stateQuery,
} from '../shared';

/** A readable, sortable id: `agent-20261122-031500-k3x9`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `agent-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * `text` as Temporal markdown that renders as itself in the Web UI: `$…$` would be math, `*`, `_`,
 * `` ` ``, `[…](…)` and `<b>` would format (the prompt and the workspace are the user's text, not
 * markup), and a leading `#`, `-`, `+`, `>` or `1.` would make a heading, a list or a quote.
 */
export function markdownText(text: string): string {
  return text.replace(/[\\`*_[\]<>$~|&]/g, '\\$&').replace(/^(\s*)([#+\->]|\d+[.)])/, '$1\\$2');
}

/**
 * The run's fixed settings as markdown, shown as the workflow's static details in the Web UI. What
 * the input leaves out is shown as the workflow will resolve it (model, iterations), or as left to
 * the worker (workspace).
 */
export function runDetails(input: AgentRunInput): string {
  const limits = [
    `${input.maxIterations ?? DEFAULTS.maxIterations} iterations`,
    input.maxBudgetUsd !== undefined ? `budget ${input.maxBudgetUsd} USD` : 'no budget limit',
    `${input.maxTokens ?? DEFAULTS.maxTokens} max tokens per model call`,
  ];
  const modes = [
    input.session ? 'session (stays open for follow-up messages)' : undefined,
    input.approveMutating ? 'mutating tools need approval' : undefined,
    input.requireDoneTool ? 'ends when the model calls `done`' : undefined,
    input.network ? 'commands may use the network' : undefined,
  ].filter((m): m is string => m !== undefined);
  return [
    `- **Model:** \`${input.model ?? DEFAULT_ANTHROPIC_MODEL}\``,
    `- **Limits:** ${limits.join(' · ')}`,
    `- **Workspace:** ${input.workspace ? markdownText(input.workspace) : "the worker's working directory"}`,
    `- **Tools:** ${describeRunTools(input, BUILTIN_TOOL_NAMES)}`,
    ...(modes.length ? [`- **Mode:** ${modes.join(' · ')}`] : []),
  ].join('\n');
}

/**
 * Starts a run. `outputSchema` may be a zod schema: it travels as its JSON Schema (read the answer
 * back typed with `AgentRun`'s `output()`, or `typedOutput`: src/client/typed-output.ts).
 */
export async function startRun(
  client: Client,
  runInput: RunStartInput,
  options: { workflowId: string; taskQueue: string },
): Promise<WorkflowHandleWithFirstExecutionRunId<typeof agentWorkflow>> {
  const input = wireInput(runInput);
  const start = {
    args: [input] as [AgentRunInput],
    taskQueue: options.taskQueue,
    workflowId: options.workflowId,
    staticSummary: markdownText(input.prompt.trim().split('\n')[0]?.slice(0, 200) ?? ''),
    staticDetails: runDetails(input),
    // A fork records where it came from (docs/checkpoints.md): memo `forkedFrom`, and a search attribute below.
    ...(input.forkedFrom ? { memo: { [FORKED_FROM_MEMO]: input.forkedFrom } } : {}),
  };
  try {
    // Indexed from the start, free: the run then upserts only when a value changes (docs/search-attributes).
    return await client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      ...start,
      typedSearchAttributes: [
        ...startSearchAttributes(input.model ?? DEFAULT_ANTHROPIC_MODEL),
        ...(input.forkedFrom ? [{ key: forkedFromSearchAttribute, value: input.forkedFrom.workflowId }] : []),
      ],
    });
  } catch (err) {
    // A namespace that does not know them yet (just registered, or never): the run writes them itself
    // at its first index, as it does for any client that starts it without them.
    if (!/no mapping defined for search attribute/i.test(errorText(err))) throw err;
    return client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, start);
  }
}

/** The error's message and its causes' (the server's reason is in the cause of a ServiceError). */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) parts.push(e.message);
  return parts.join(' ');
}

export function getRun(client: Client, workflowId: string): AgentHandle {
  return client.workflow.getHandle<typeof agentWorkflow>(workflowId);
}

export const queryState = (handle: AgentHandle): Promise<AgentRunState> => handle.query(stateQuery);
/**
 * A page of the run's events after `after`. `includePartial`: also what the in-flight model call has
 * streamed so far (`partial`, bounded; docs/live-output.md#partial-output), read from its heartbeat
 * details with `describe()`, which is not a billable action, so it adds nothing to the query's cost.
 */
export async function queryEvents(
  handle: AgentHandle,
  after: number,
  options: { includePartial?: boolean } = {},
): Promise<EventsPage & { partial?: PartialOutput }> {
  if (!options.includePartial) return handle.query(eventsQuery, { after });
  const [page, snapshot] = await Promise.all([
    handle.query(eventsQuery, { after }),
    readLiveSnapshot(handle).catch(() => undefined),
  ]);
  return snapshot ? { ...page, partial: { kind: 'partial', ...snapshot } } : page;
}
export const interruptRun = (handle: AgentHandle, reason?: string): Promise<void> =>
  handle.signal(interruptSignal, reason !== undefined ? { reason } : {});

/** The failure type a run whose agent ended `failed` fails with; its details[0] is the run's `AgentRunResult`. */
export const RUN_FAILED_TYPE = ErrorTypes.RunFailed;

/** How a closed run ended when it left no `AgentRunResult`: Temporal ended it, or its input was refused. */
function looksLikeResult(value: unknown): value is AgentRunResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AgentRunResult).exitReason === 'string' &&
    typeof (value as AgentRunResult).finalText === 'string'
  );
}

/**
 * Turns the failure a closed run's result threw into what the run left: the `AgentRunResult` of a
 * run whose agent failed (kept in the failure's details), or a `RunEndedError` saying how Temporal
 * ended it. Anything else (the server unreachable, no such run) is returned as it is.
 */
export function outcomeOfFailure(error: unknown): AgentRunResult | RunEndedError | unknown {
  if (!(error instanceof WorkflowFailedError)) return error;
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) {
    const details = cause.details?.[0];
    if (cause.type === RUN_FAILED_TYPE && looksLikeResult(details)) return details;
    return new RunEndedError('failed', `${cause.type ? `${cause.type}: ` : ''}${cause.message}`);
  }
  if (cause instanceof CancelledFailure) {
    const details = cause.details?.[0];
    if (looksLikeResult(details)) return details;
    return new RunEndedError('cancelled', 'cancelled by a Temporal client (workflow cancel)');
  }
  if (cause instanceof TerminatedFailure) return new RunEndedError('terminated', `terminated: ${cause.message}`);
  if (cause instanceof TimeoutFailure) return new RunEndedError('timed_out', 'the workflow run timeout expired');
  return new RunEndedError('failed', cause?.message ?? error.message);
}

/**
 * Waits for the run (following continue-as-new) and returns its `AgentRunResult`, including for a
 * run whose agent failed. Throws `RunEndedError` for a run that ended without one. A closed run
 * answers at once: this reads its close event from history and needs no worker.
 */
export async function runResult(handle: AgentHandle): Promise<AgentRunResult> {
  try {
    return await handle.result();
  } catch (e) {
    const outcome = outcomeOfFailure(e);
    if (looksLikeResult(outcome)) return outcome;
    if (outcome instanceof RunEndedError && outcome.status === 'cancelled') {
      const kept = await cancelledRunResult(handle);
      if (kept) return kept;
    }
    throw outcome;
  }
}

/** The `AgentRunResult` a cancelled run wrote into its memo (runs from before it did so have none). */
async function cancelledRunResult(handle: AgentHandle): Promise<AgentRunResult | undefined> {
  try {
    const memo = (await handle.describe()).memo?.[CANCELLED_RESULT_MEMO];
    return looksLikeResult(memo) && memo.exitReason === 'cancelled' ? memo : undefined;
  } catch {
    return undefined;
  }
}

/** Adds a user message to a run (the `sendMessage` update; its validator rejects ended runs and empty text). */
export const sendMessage = (handle: AgentHandle, message: string): Promise<SendMessageResult> =>
  handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
export const approveTool = (handle: AgentHandle, toolUseId: string): Promise<ApprovalResult> =>
  handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId }] });
export const denyTool = (handle: AgentHandle, toolUseId: string, reason?: string): Promise<ApprovalResult> =>
  handle.executeUpdate(denyToolUpdate, { args: [reason !== undefined ? { toolUseId, reason } : { toolUseId }] });
/** Ends a session that waits for input (the `endSession` update): the run completes with its last answer. */
export const endSession = (handle: AgentHandle): Promise<EndSessionResult> =>
  handle.executeUpdate(endSessionUpdate, { args: [{}] });

export { WorkflowNotFoundError };
