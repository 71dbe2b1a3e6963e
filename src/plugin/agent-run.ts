import type { Client } from '@temporalio/client';
import {
  type AgentHandle,
  approveTool,
  denyTool,
  endSession,
  getRun,
  interruptRun,
  newRunId,
  queryEvents,
  queryState,
  runResult,
  sendMessage,
  startRun,
} from '../client';
import type { AgentRunInput, AgentRunResult, AgentRunState, EventsPage, RunEvent } from '../shared/run';
import type { ApprovalResult, EndSessionResult, SendMessageResult } from '../shared/definitions';

export interface StartAgentRunOptions {
  /** The task queue of a worker with the `AgentPlugin` that registers `agentWorkflow`. */
  taskQueue: string;
  /** Default: a readable unique id, `agent-20261122-031500-k3x9`. */
  workflowId?: string;
}

export interface FollowOptions {
  /** Start after this event `seq` (default 0: from the first event). */
  after?: number;
  /** How long to wait between polls when no new event came (default 500 ms). */
  intervalMs?: number;
  /** Stops following (the iterator returns). */
  signal?: AbortSignal;
}

/**
 * A typed handle on one agent run (a workflow id): what the `durable-agent` CLI does with a run, as
 * methods. Queries and updates need a worker polling the run's task queue; `result` of a closed run
 * does not.
 */
export class AgentRun {
  private constructor(
    /** The Temporal handle, for anything else (describe, cancel, terminate). */
    readonly handle: AgentHandle,
  ) {}

  /** Starts `agentWorkflow` with `input` on `options.taskQueue`. */
  static async start(client: Client, input: AgentRunInput, options: StartAgentRunOptions): Promise<AgentRun> {
    if (typeof options?.taskQueue !== 'string' || options.taskQueue.trim() === '') {
      throw new TypeError('AgentRun.start needs options.taskQueue: the queue of a worker with the AgentPlugin');
    }
    const workflowId = options.workflowId ?? newRunId();
    await startRun(client, input, { taskQueue: options.taskQueue, workflowId });
    return AgentRun.get(client, workflowId);
  }

  /** The run with this workflow id (its latest execution, across continue-as-new). */
  static get(client: Client, workflowId: string): AgentRun {
    return new AgentRun(getRun(client, workflowId));
  }

  get workflowId(): string {
    return this.handle.workflowId;
  }

  /** Status, iteration, usage, cost, running tools, pending approvals. */
  state(): Promise<AgentRunState> {
    return queryState(this.handle);
  }
  /** One page of progress events after `after` (a `seq`). */
  events(after = 0): Promise<EventsPage> {
    return queryEvents(this.handle, after);
  }
  /** Stops the run: running model and tool calls are cancelled, the run ends `interrupted`. */
  interrupt(reason?: string): Promise<void> {
    return interruptRun(this.handle, reason);
  }
  /** Adds a user message, taken at the next iteration boundary (a waiting session at once). */
  send(message: string): Promise<SendMessageResult> {
    return sendMessage(this.handle, message);
  }
  approve(toolUseId: string): Promise<ApprovalResult> {
    return approveTool(this.handle, toolUseId);
  }
  deny(toolUseId: string, reason?: string): Promise<ApprovalResult> {
    return denyTool(this.handle, toolUseId, reason);
  }
  /** Ends a session that waits for input: the run completes with its last answer. */
  end(): Promise<EndSessionResult> {
    return endSession(this.handle);
  }
  /**
   * Waits for the run's `AgentRunResult`, also for a run whose agent failed. Throws `RunEndedError`
   * for a run Temporal ended without one (cancelled, terminated, timed out).
   */
  result(): Promise<AgentRunResult> {
    return runResult(this.handle);
  }

  /**
   * The run's events as they happen, until `run_finished` (or the workflow closed without one, or
   * `signal` aborted). A session waiting for input keeps the iterator open: `break` to stop.
   */
  async *follow(options: FollowOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
    let after = options.after ?? 0;
    const intervalMs = options.intervalMs ?? 500;
    while (!options.signal?.aborted) {
      const page = await this.events(after);
      for (const event of page.events) {
        yield event;
        if (event.kind === 'run_finished') return;
      }
      after = page.cursor;
      if (page.events.length) continue;
      const { status } = await this.handle.describe();
      if (status.name !== 'RUNNING' && status.name !== 'CONTINUED_AS_NEW') return;
      await pause(intervalMs, options.signal);
    }
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
