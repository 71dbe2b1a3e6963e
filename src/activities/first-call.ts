import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type {
  CallModelInput,
  CallModelOutput,
  FirstModelCallInput,
  FirstModelCallOutput,
  PrepareRunInput,
  PrepareRunOutput,
} from '../shared/activity-io';
import { ErrorTypes } from '../shared/constants';
import { CANCEL_WATCH_MS, withCancelWatch } from './cancel-watch';

export interface FirstModelCallDeps {
  prepareRun: (input: PrepareRunInput) => Promise<PrepareRunOutput>;
  callModel: (input: CallModelInput) => Promise<CallModelOutput>;
  /** How often run start asks whether it was cancelled (0: only its heartbeats bring a cancel). */
  cancelWatchMs?: number;
}

/**
 * The `firstModelCall` activity (0.3.0): a new run's start (its workspace admitted, its system
 * prompt assembled, its hooks and MCP servers found: what `prepareRun` does) and its first model
 * call, in one activity. Run start as a local activity of its own cost every run a workflow
 * activation and a marker, a billable action (docs/benchmarks.md, "Run start folded into the first
 * model call"). The model is not called when the workflow must act in between: the prompt goes
 * through UserPromptSubmit hooks first, or MCP servers add tools the workflow carries. A refused
 * workspace is an answer, not a failure: the run fails with the worker's message, as before.
 */
export function createFirstModelCall(deps: FirstModelCallDeps) {
  return async function firstModelCall(input: FirstModelCallInput): Promise<FirstModelCallOutput> {
    const { prepare, ...call } = input;
    const ctx = Context.current();
    let prepared: PrepareRunOutput;
    // Run start is quick, but MCP servers may take their connect timeout: it heartbeats like a model
    // call waiting (40 % of the heartbeat timeout), so it is neither timed out nor deaf to a cancel.
    const beatNow = () => ctx.heartbeat({ phase: 'run start' });
    const beat = setInterval(beatNow, heartbeatGapMs(ctx));
    try {
      // An interrupt while MCP servers start reaches run start at once, as it reaches a model call.
      prepared = await withCancelWatch(
        ctx,
        beatNow,
        () => deps.prepareRun(prepare),
        deps.cancelWatchMs ?? CANCEL_WATCH_MS,
      );
    } catch (error) {
      if (error instanceof ApplicationFailure && error.type === ErrorTypes.WorkspaceRefused) {
        return { refused: error.message };
      }
      throw error;
    } finally {
      clearInterval(beat);
    }
    if (mustActFirst(prepared)) return { prepared };
    // Cancelled (an interrupt) or timed out while run start ran: the prompt is not sent.
    ctx.cancellationSignal.throwIfAborted();
    // The assembled prompt is this call's system prompt; the cache keeps it with the conversation.
    return { prepared, response: await deps.callModel({ ...call, system: prepared.context.system }) };
  };
}

/** How often run start heartbeats: 40 % of the activity's heartbeat timeout (a model call's longest gap). */
function heartbeatGapMs(ctx: Context): number {
  const timeout = ctx.info.heartbeatTimeoutMs;
  return Math.max(200, Math.floor(0.4 * (timeout && timeout > 0 ? timeout : 20_000)));
}

/** Whether the workflow must act on run start before the first model call. */
function mustActFirst(prepared: PrepareRunOutput): boolean {
  return prepared.hooks.events.includes('UserPromptSubmit') || (prepared.mcp?.servers.length ?? 0) > 0;
}
