import { ActivityCancellationType, type ActivityInterfaceFor, log, proxyActivities } from '@temporalio/workflow';
import type { Priority } from '@temporalio/common';
import type { Activities } from '../../activities';
import type {
  AdmissionTags,
  CallModelOutput,
  FirstModelCallOutput,
  PrepareRunInput,
  SummarizeRunOutput,
} from '../../shared/activity-io';
import { CACHE_MISS_ERROR_TYPE, hashString, type ConversationDelta } from '../../shared/conversation';
import { textOf, type ModelResponse, type ToolSpec, type ToolChoice } from '../../shared/messages';
import type { RunEventInput } from '../../shared/run';
import { modelCallSummary } from '../../shared/summaries';
import type { ToolChoicePolicy } from './tool-choice';
import { modelActivityOptions, type RunTimeouts } from '../../shared/run-timeouts';
import type { Conversation } from '../run/conversation';
import { agentActivities } from './activity-proxy';
import { fallbackAfter, placement, type Options, type Route } from './fallback';
import { failureMessage, failureType } from './failures';

export { failureMessage, failureType, stopping } from './failures';

/** A closing call's answer: its text and the response it came in. */
export interface Summary {
  text: string;
  response: ModelResponse;
}

export interface ModelCallSettings {
  model: string;
  system?: string;
  toolNames?: string[];
  extraToolNames?: string[];
  maxTokens: number;
  toolProtocol?: 'xml';
  /** The run's `toolChoice` over its calls (native tool calls only); unset: `auto`. */
  toolChoice?: ToolChoicePolicy;
  /** The run's `outputSchema`, sent with iteration calls (not summaries) for native structured output. */
  outputSchema?: Record<string, unknown>;
}

/**
 * Model calls with the conversation as a delta against the worker's cache (docs/architecture.md#history-stays-linear), routed
 * to the worker that holds it when there is one. A worker without the prefix (another worker, a
 * restart, an eviction) fails fast with a cache miss; the conversation then goes once in full.
 */
export class ModelCalls {
  private readonly activities: ActivityInterfaceFor<Pick<Activities, 'callModel' | 'firstModelCall' | 'summarizeRun'>>;
  private systemHash: string | undefined;
  /** The run's MCP tool definitions (docs/mcp.md), their hash, and whether a call has carried them since they changed. */
  private mcp: { specs: ToolSpec[]; hash: string; sent: boolean } | undefined;
  private mcpSpecs: { specs: ToolSpec[]; hash: string } | undefined;
  private workflowTools: ToolSpec[] = [];
  private readonly admission: AdmissionTags | undefined;
  /** Worker queues that did not take a call in time: not followed again in this execution. */
  private readonly abandoned = new Set<string>();

  constructor(
    private readonly conversation: Conversation,
    private readonly settings: ModelCallSettings,
    private readonly emit: (event: RunEventInput) => void,
    /** Where the worker holding the conversation is: the run's state, carried across continue-as-new. */
    private readonly route: Route,
    timeouts: RunTimeouts | undefined,
    /**
     * The run's priority and fairness key (docs/models.md, "Rate limits"): they travel with each call to the worker's
     * admission, and as the calls' Temporal priority (which orders backlogged tasks where the server does).
     */
    priority?: Priority,
  ) {
    if (priority?.priorityKey !== undefined || priority?.fairnessKey !== undefined) {
      this.admission = {
        ...(priority.priorityKey !== undefined ? { priority: priority.priorityKey } : {}),
        ...(priority.fairnessKey !== undefined ? { fairnessKey: priority.fairnessKey } : {}),
      };
    }
    this.activities = agentActivities(
      proxyActivities<Activities>({
        ...modelActivityOptions(timeouts),
        ...(priority && (priority.priorityKey !== undefined || priority.fairnessKey !== undefined) ? { priority } : {}),
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      }),
    );
    this.useSystem(settings.system);
  }

  /** The task queue of the worker holding the conversation, if any. */
  get workerQueue(): string | undefined {
    return this.route.workerQueue;
  }

  /**
   * The workflow runs on the worker with this queue (a local activity said so). Calls follow it
   * there, so the conversation, the results of local tools and the workflow share one worker's
   * cache: a worker that does not hold the conversation gets it in full at once, with no failed
   * delta attempt first.
   */
  followWorkflow(queue: string | undefined): void {
    if (!queue || queue === this.workerQueue) return;
    if (this.abandoned.has(queue)) return;
    this.route.workerQueue = queue;
    this.conversation.resendInFull();
  }

  /** The system prompt of every later call (the one assembled at run start). */
  useSystem(system: string | undefined): void {
    this.settings.system = system;
    this.systemHash = system !== undefined ? hashString(system) : undefined;
  }

  /** The run's MCP tools from now on; the worker keeps them by hash, so they travel with full loads and after a change. */
  useMcpTools(specs: ToolSpec[], hash: string | undefined): void {
    this.mcpSpecs = hash === undefined ? undefined : { specs, hash };
    this.combineTools();
  }

  /** Tools the workflow runs itself (`task`): they travel with the MCP tools' definitions, by hash. */
  useWorkflowTools(specs: ToolSpec[]): void {
    this.workflowTools = specs;
    this.combineTools();
  }

  private combineTools(): void {
    const mcp = this.mcpSpecs;
    if (this.workflowTools.length === 0) {
      this.mcp = mcp ? { ...mcp, sent: false } : undefined;
      return;
    }
    const specs = [...(mcp?.specs ?? []), ...this.workflowTools];
    this.mcp = { specs, hash: hashString(JSON.stringify(specs)), sent: false };
  }

  /** What every model call of this run sends: the settings and the conversation (a delta). */
  private request(conversation: ConversationDelta, structured = false) {
    const s = this.settings;
    // The worker keeps the system prompt with the conversation: it travels with full loads only.
    const system = this.systemHash === undefined ? { system: s.system } : conversation.full ? { system: s.system } : {};
    const mcp = this.mcp;
    const sendMcp = mcp !== undefined && (conversation.full || !mcp.sent);
    if (sendMcp) mcp.sent = true;
    return {
      model: s.model,
      ...system,
      ...(this.systemHash !== undefined ? { systemHash: this.systemHash } : {}),
      ...(s.toolProtocol ? { toolProtocol: s.toolProtocol } : {}),
      conversation,
      toolNames: s.toolNames,
      extraToolNames: s.extraToolNames,
      maxTokens: s.maxTokens,
      ...(mcp ? { mcpToolsHash: mcp.hash, ...(sendMcp ? { mcpTools: mcp.specs } : {}) } : {}),
      ...(structured && s.outputSchema ? { outputSchema: s.outputSchema } : {}),
      ...(this.admission ? { admission: this.admission } : {}),
    };
  }

  /** One iteration's model call; the answer goes to {@link noteRoute}. */
  call(iteration: number): Promise<CallModelOutput> {
    const s = this.settings;
    return this.withConversation((conversation, options) =>
      this.activities.callModel.executeWithOptions({ summary: modelCallSummary(s.model, iteration), ...options }, [
        this.callInput(conversation),
      ]),
    );
  }

  /** The answer said the call waited for its key's rate budget first: a `rate_limited` event before it is handled. */
  private reportWait(response: Pick<ModelResponse, 'rateLimited'> | undefined): void {
    const wait = response?.rateLimited;
    if (wait && typeof wait.waitMs === 'number' && wait.waitMs > 0)
      this.emit({ kind: 'rate_limited', provider: String(wait.provider), waitMs: Math.round(wait.waitMs) });
  }

  /**
   * A new run's first call with its run start (`firstModelCall`, steps/start.ts): no system prompt
   * yet, the worker assembles it. Its outcome may hold no answer (see FirstModelCallOutput).
   */
  async first(iteration: number, prepare: PrepareRunInput): Promise<FirstModelCallOutput> {
    const s = this.settings;
    const result = await this.withConversation((conversation, options) => {
      const { system: _system, systemHash: _hash, ...call } = this.callInput(conversation);
      return this.activities.firstModelCall.executeWithOptions(
        { summary: `assemble context · ${modelCallSummary(s.model, iteration)}`, ...options },
        [{ ...call, prepare }],
      );
    });
    this.reportWait(result.response);
    return result;
  }

  private callInput(conversation: ConversationDelta) {
    return this.settings.toolProtocol
      ? this.request(conversation, true)
      : { ...this.request(conversation, true), toolChoice: this.toolChoiceFor() };
  }

  /**
   * An iteration's answer, before it is handled: a wait for the key's rate budget is reported, and the
   * worker that answered holds the conversation now (a pinned run's next calls go to its queue).
   */
  noteAnswer(response: CallModelOutput): void {
    this.reportWait(response);
    if (response.workerQueue) this.route.workerQueue = response.workerQueue;
  }

  /** The run's `toolChoice` for the next call (calls/tool-choice.ts says how it holds over the run). */
  private toolChoiceFor(): ToolChoice {
    return this.settings.toolChoice?.next() ?? { type: 'auto' };
  }

  /**
   * A closing call (summary, compaction) with an instruction; the conversation is unchanged. A result
   * the summary cannot be read from fails the call, as a failed activity does.
   */
  async summary(instruction: string, label: string): Promise<Summary> {
    const s = this.settings;
    const result: SummarizeRunOutput = await this.withConversation((conversation, options) =>
      this.activities.summarizeRun.executeWithOptions({ summary: `${label} · ${s.model}`, ...options }, [
        { ...this.request(conversation), instruction },
      ]),
    );
    this.reportWait(result?.response);
    // Results recorded before bounded payloads carry the text; newer ones only the response.
    return { text: result.text ?? textOf(result.response.content), response: result.response };
  }

  /**
   * Runs an activity where the conversation is. At first on the run's own task queue: with eager
   * activity dispatch the server hands the call straight to the worker completing this workflow
   * task, which is the worker caching the run and, after its first call, the conversation (no
   * matching, no poll). Once a call missed the cache there (no eager dispatch, several workers),
   * the run pins its calls to the worker queue of the worker holding the conversation; if that
   * worker does not take a call in time (gone, saturated) or shuts down during it, the run forgets
   * it and `fallback` decides what to do on the shared queue, told whether an attempt may have
   * started (a mutating tool is then not re-run blindly).
   *
   * Tool calls use this form, a `.catch` between the call and its caller: a turn's calls run side by
   * side, and a fallback's command keeps its place among the other calls' commands in histories
   * recorded with it. Model calls, which run alone, use {@link onWorkerCall}.
   */
  onWorker<T>(
    call: (options: Options) => Promise<T>,
    fallback: (mayHaveStarted: boolean) => Promise<T>,
    /**
     * Tools: one attempt, so its failure tells whether it started. A schedule-to-start timeout on a
     * worker queue means it never did; any other loss (the worker died or shut down mid-call) means
     * it may have, and the shared queue takes over at once (a mutating tool is not re-run blindly).
     * Model calls keep their retry policy (429s wait their Retry-After).
     */
    singleAttempt = false,
  ): Promise<T> {
    const queue = this.route.callsPinned ? this.workerQueue : undefined;
    if (!queue && !singleAttempt) return call({});
    return call(placement(queue, singleAttempt)).catch((err: unknown) => {
      const mayHaveStarted = fallbackAfter(err, {
        queue,
        singleAttempt,
        route: this.route,
        abandoned: this.abandoned,
        emit: this.emit,
      });
      if (mayHaveStarted === undefined) throw err;
      return fallback(mayHaveStarted);
    });
  }

  /** {@link onWorker} for a model call: its retry policy kept, the fallback on the shared queue with the conversation whole. */
  private onWorkerCall<T>(call: (options: Options) => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    const queue = this.route.callsPinned ? this.workerQueue : undefined;
    return queue ? this.onPinnedWorker(queue, call, fallback) : call({});
  }

  private async onPinnedWorker<T>(
    queue: string,
    call: (options: Options) => Promise<T>,
    fallback: () => Promise<T>,
  ): Promise<T> {
    try {
      return await call(placement(queue, false));
    } catch (err) {
      const moved = fallbackAfter(err, {
        queue,
        singleAttempt: false,
        route: this.route,
        abandoned: this.abandoned,
        emit: this.emit,
      });
      if (moved === undefined) throw err;
      return fallback();
    }
  }

  private async withConversation<T>(
    call: (conversation: ConversationDelta, options: Options) => Promise<T>,
  ): Promise<T> {
    // A call that falls back from a gone worker lands on one without the conversation: send it whole.
    const attempt = (full: boolean) =>
      this.onWorkerCall(
        (options) => call(this.conversation.delta(full), options),
        () => call(this.conversation.delta(true), {}),
      );
    if (!this.conversation.hasSyncedPrefix) return attempt(true);
    try {
      return await attempt(false);
    } catch (err) {
      if (failureType(err) !== CACHE_MISS_ERROR_TYPE) throw err;
      log.info('conversation cache miss; resending the whole conversation', { error: failureMessage(err) });
      if (!this.route.callsPinned) {
        // The call reached a worker without the conversation: from now on the run's calls (this
        // execution's and the next ones') go to the queue of the worker that takes this one (its
        // result names it), not wherever dispatch lands.
        this.route.callsPinned = true;
        this.route.workerQueue = undefined;
      }
      return attempt(true);
    }
  }
}
