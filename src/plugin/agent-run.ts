import type { Client } from '@temporalio/client';
import type { z } from 'zod';
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
import {
  parseRunInput,
  type AgentRunState,
  type EventsPage,
  type Message,
  type OutputSchema,
  type RunEvent,
} from '../shared';
import type { ApprovalResult, EndSessionResult, SendMessageResult } from '../shared/definitions';
import {
  isZodSchema,
  parseOutput,
  typedOutput,
  wireInput,
  type RunStartInput,
  type TypedRunResult,
} from '../client/typed-output';
import { followRun, type FollowEvent, type FollowOptions, type PartialEvent } from './follow-run';
import { runMessages } from './result-messages';
import { planFork, type ForkRequest } from '../client/checkpoints/fork-plan';
import { steer } from './run-errors';

export interface StartAgentRunOptions {
  /** The task queue of a worker with the `AgentPlugin` that registers `agentWorkflow`. */
  taskQueue: string;
  /** Default: a readable unique id, `agent-20261122-031500-k3x9`. */
  workflowId?: string;
}

/** `AgentRun.get`'s options: the zod schema the run was started with, to read its `output` typed. */
export interface GetAgentRunOptions<S extends z.ZodType = z.ZodType> {
  outputSchema?: S;
}

export interface ResultOptions {
  /** Also the run's whole conversation, from history (as `result --json --messages`). */
  messages?: boolean;
}

/**
 * A typed handle on one agent run (a workflow id): what the `durable-agent` CLI does with a run, as
 * methods. Queries and updates need a worker polling the run's task queue; `result` of a closed run
 * does not. `Output` is the type of the run's answer: a zod schema given as `outputSchema` sets it,
 * and the answer is parsed with that schema on this side too.
 */
export class AgentRun<Output = unknown> {
  private constructor(
    /** The Temporal handle, for anything else (describe, cancel, terminate). */
    readonly handle: AgentHandle,
    private readonly schema: z.ZodType<Output> | undefined,
    private readonly client: Client,
  ) {}

  /**
   * Starts `agentWorkflow` with `input` on `options.taskQueue`. `input.outputSchema` may be a zod 4
   * schema: the run gets its JSON Schema, and `result()`/`output()` parse the answer with it. An input
   * the run would refuse throws a `TypeError` saying why (`Invalid run input: maxIterations: …`).
   */
  static start<S extends z.ZodType>(
    client: Client,
    input: RunStartInput & { outputSchema: S },
    options: StartAgentRunOptions,
  ): Promise<AgentRun<z.output<S>>>;
  static start<Output = unknown>(
    client: Client,
    input: RunStartInput & { outputSchema?: OutputSchema },
    options: StartAgentRunOptions,
  ): Promise<AgentRun<Output>>;
  static async start(client: Client, input: RunStartInput, options: StartAgentRunOptions): Promise<AgentRun> {
    if (typeof options?.taskQueue !== 'string' || options.taskQueue.trim() === '') {
      throw new TypeError('AgentRun.start needs options.taskQueue: the queue of a worker with the AgentPlugin');
    }
    if (typeof input !== 'object' || input === null) {
      throw new TypeError('AgentRun.start needs an input object, such as { prompt: "…" }');
    }
    // Checked here as the workflow will check it: a bad input is refused before any run starts.
    const parsed = parseRunInput(wireInput(input));
    if (!parsed.ok) throw new TypeError(parsed.error);
    const workflowId = options.workflowId ?? newRunId();
    await startRun(client, input, { taskQueue: options.taskQueue, workflowId });
    return AgentRun.get(
      client,
      workflowId,
      isZodSchema(input.outputSchema) ? { outputSchema: input.outputSchema } : {},
    );
  }

  /**
   * Starts a new run from `workflowId`'s turn `options.atTurn` (docs/checkpoints.md#fork): its
   * conversation up to the end of that turn, then `options.prompt` when given; its workspace
   * (`options.workspace`, default a new directory beside the original's named after the fork)
   * restored from that turn's checkpoint by the worker at run start. The original is only read (its
   * history: no worker needed for that). Throws, saying why and which turns can be forked, for a turn
   * without a checkpoint.
   */
  static async fork(
    client: Client,
    workflowId: string,
    options: ForkRequest & StartAgentRunOptions,
  ): Promise<AgentRun> {
    if (typeof options?.taskQueue !== 'string' || options.taskQueue.trim() === '') {
      throw new TypeError('AgentRun.fork needs options.taskQueue: the queue of a worker with the AgentPlugin');
    }
    const forkId = options.workflowId ?? newRunId();
    const { taskQueue: _q, workflowId: _w, ...request } = options;
    const plan = await planFork(client, workflowId, request, forkId);
    await startRun(client, plan.input, { taskQueue: options.taskQueue, workflowId: forkId });
    return AgentRun.get(client, forkId);
  }

  /** The run with this workflow id (its latest execution, across continue-as-new). */
  static get<S extends z.ZodType>(
    client: Client,
    workflowId: string,
    options: GetAgentRunOptions<S> & { outputSchema: S },
  ): AgentRun<z.output<S>>;
  static get<Output = unknown>(client: Client, workflowId: string, options?: GetAgentRunOptions): AgentRun<Output>;
  static get(client: Client, workflowId: string, options: GetAgentRunOptions = {}): AgentRun {
    if (typeof workflowId !== 'string' || workflowId === '') {
      throw new TypeError('AgentRun.get needs the run’s workflow id (a non-empty string)');
    }
    const schema = options.outputSchema;
    if (schema !== undefined && !isZodSchema(schema)) {
      throw new TypeError('AgentRun.get: options.outputSchema must be the zod schema the run was started with');
    }
    return new AgentRun(getRun(client, workflowId), schema, client);
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
  /**
   * Stops the run: running model and tool calls are cancelled, the run ends `interrupted`. Throws
   * `RunRefusedError` when the run has already ended.
   */
  interrupt(reason?: string): Promise<void> {
    return steer(this.handle, () => interruptRun(this.handle, reason));
  }
  /**
   * Adds a user message, taken at the next iteration boundary (a waiting session at once). A refusal
   * (an ended run, an empty message) throws `RunRefusedError` with the run's reason as its message.
   */
  send(message: string): Promise<SendMessageResult> {
    return steer(this.handle, () => sendMessage(this.handle, message));
  }
  /** Approves a waiting tool call; `RunRefusedError` with the run's reason when there is none by that id. */
  approve(toolUseId: string): Promise<ApprovalResult> {
    return steer(this.handle, () => approveTool(this.handle, toolUseId));
  }
  /** Denies a waiting tool call (the model sees `reason`); `RunRefusedError` as for `approve`. */
  deny(toolUseId: string, reason?: string): Promise<ApprovalResult> {
    return steer(this.handle, () => denyTool(this.handle, toolUseId, reason));
  }
  /** Ends a session that waits for input: the run completes with its last answer. */
  end(): Promise<EndSessionResult> {
    return steer(this.handle, () => endSession(this.handle));
  }

  /**
   * Waits for the run's `AgentRunResult`: for every exit reason, `failed` included, and for a run
   * cancelled from Temporal (exit reason `cancelled`, `error.type` `DurableAgent.Cancelled`, with the
   * usage, cost and text it had, the text cut to 16 KiB, from the run's memo). Throws `RunEndedError`
   * only for a run that left none: terminated, timed out, or its input refused. With a zod
   * schema, `output` is parsed with it (`OutputMismatchError` when it refuses the answer).
   * `{ messages: true }`: also the whole conversation, read from history.
   */
  result(options: ResultOptions & { messages: true }): Promise<TypedRunResult<Output> & { messages: Message[] }>;
  result(options?: ResultOptions): Promise<TypedRunResult<Output> & { messages?: Message[] }>;
  async result(options: ResultOptions = {}): Promise<TypedRunResult<Output> & { messages?: Message[] }> {
    const result = parseOutput(await runResult(this.handle), this.schema);
    if (!options?.messages) return result;
    return { ...result, messages: await runMessages(this.client, this.workflowId) };
  }

  /**
   * The run's typed answer (waits for the run): its `output`, parsed with the zod schema when it was
   * given one. Throws when the run ended without an answer that matched its schema, saying how it ended.
   */
  async output(): Promise<Output> {
    const result = await runResult(this.handle);
    if (this.schema) return typedOutput(result, this.schema);
    if (result.output === undefined) {
      throw new Error(
        `run ended '${result.exitReason}' without a typed answer` +
          (result.error ? `: ${result.error.message}` : ' (was it started with an outputSchema?)'),
      );
    }
    return result.output as Output;
  }

  /**
   * The run's events as they happen, until `run_finished` (or the workflow closed without one, or
   * `signal` aborted). A session waiting for input keeps the iterator open: `break` to stop. With
   * `partial: true`, also `partial` events: the in-flight model call's text as it streams.
   */
  follow(options: FollowOptions & { partial: true }): AsyncGenerator<FollowEvent, void, undefined>;
  follow(options?: FollowOptions): AsyncGenerator<RunEvent, void, undefined>;
  follow(options: FollowOptions = {}): AsyncGenerator<RunEvent | PartialEvent, void, undefined> {
    return followRun(this.handle, options ?? {});
  }
}
