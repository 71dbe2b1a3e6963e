import { cutBytes } from '../../shared/bounds';
import { CARRIED_LAST_TEXT_BYTES, CARRIED_TEXT_PREFIX_BYTES, MAX_FINAL_TEXT_BYTES } from '../../shared/constants';
import {
  ZERO_USAGE,
  addUsage,
  type Message,
  type ModelResponse,
  type StopReason,
  type Usage,
} from '../../shared/messages';
import { COMPACT_AT_FRACTION } from '../../shared/model-limits';
import { costOf } from '../../shared/pricing';
import type { ExitReason, RunContinuation, RunStatus } from '../../shared/run';
import { Conversation } from './conversation';
import { EventLog } from './events';
import { Inbox } from './inbox';

/** The run's context, as the workflow keeps and carries it. */
export type RunContext = NonNullable<RunContinuation['context']>;

/** What a fresh run (no carried state) starts from, and the hooks the state needs from its workflow. */
export interface Fresh {
  /** The conversation's id (`<workflowId>/<runId>` of the first execution) and its first message. */
  conversationId: string;
  prompt: string;
  /** A fork's inherited conversation (input `conversation`): the run starts from it instead of its prompt. */
  conversation?: Message[];
  /** True while the workflow replays history (the conversation then skips hashing). */
  replaying?: () => boolean;
  /** Called after each event is recorded (the run's details follow). */
  onEvent?: () => void;
  /**
   * The run's model has a known price. A run on a model without one has an unknown cost from the
   * start (null), even when it ends before any call: never a made-up 0.
   */
  priced?: boolean;
}

/**
 * Everything one run remembers, in one object: its counters and flags, the conversation, the
 * messages waiting for it, its progress events and what run start assembled. What crosses
 * continue-as-new is written by `snapshot()` and read back by `RunState.restore()`, side by side
 * below: a new carried field is a field here, a line in each of the two, and its type in
 * `runContinuationSchema` (src/shared/run/continuation.ts). A few rules keep the numbers consistent: cost is
 * `null` once any call's price is unknown (a partial sum would under-report), the status is derived.
 */
export class RunState {
  iteration = 0;
  /** Model calls since the session's current message began; equal to `iteration` outside sessions. */
  turnIterations = 0;
  usage: Usage = { ...ZERO_USAGE };
  costUsd: number | null = 0;
  lastStopReason: StopReason | null | undefined;
  /** The newest non-empty assistant text: what an interrupted or failed run reports. */
  lastAssistantText = '';
  /** Text of answers cut at max_tokens; the answer that continues them is appended to it. */
  textPrefix = '';
  continuations = 0;
  compactions = 0;
  /** The iteration at which the conversation was last compacted by a summary. */
  lastCompactionIteration: number | undefined;
  needsCompaction = false;
  /** The task queue of the worker holding the conversation, if any (pinned calls go there). */
  workerQueue: string | undefined;
  /** A call missed the conversation cache: calls go to `workerQueue`, not wherever dispatch lands (calls/model-calls.ts). */
  callsPinned = false;
  /** What run start assembled (system prompt, its sources, the workspace's real path); once per run. */
  context: RunContext | undefined;
  /** Hook events the worker reported at run start: only these schedule hook activities. */
  hookEvents: string[] = [];
  /** Stop hooks that kept the run going in a row. */
  stopBlocks = 0;
  /** An execution that continued the run (not its first): run start and the prompt's hooks are done. */
  resumed = false;
  /** A session that handed over while waiting for input waits on until this deadline (epoch ms). */
  waitingUntil: number | undefined;

  // Not carried: this execution's own.
  finalStatus: ExitReason | undefined;
  awaitingInput = false;
  /** tool_use id → tool name of the calls running now. */
  readonly activeTools = new Map<string, string>();
  interrupt: { reason?: string } | undefined;
  /** A waiting session was asked to end (`endSession`). */
  endRequested = false;
  /** Input tokens (all kinds) of this execution's last iteration call: the next call's is at least that. */
  lastCallInputTokens = 0;
  /** Tool calls waiting for an operator (this run's and its subagents'): the status says so. */
  pendingApprovals: () => number = () => 0;

  private constructor(
    readonly conversation: Conversation,
    readonly inbox: Inbox,
    readonly events: EventLog,
  ) {}

  /** The state a run starts an execution with: carried over (`resume`), or a fresh run's. */
  static restore(resume: RunContinuation | undefined, fresh: Fresh): RunState {
    const conversation = new Conversation(
      resume?.conversation ?? {
        id: fresh.conversationId,
        messages: fresh.conversation ?? [{ role: 'user', content: fresh.prompt }],
      },
      fresh.replaying,
    );
    const s = new RunState(conversation, new Inbox(resume?.pendingMessages), new EventLog(resume, fresh.onEvent));
    if (!resume) {
      if (fresh.priced === false) s.costUsd = null;
      return s;
    }
    s.resumed = true;
    s.iteration = resume.iteration;
    s.turnIterations = resume.turnIterations ?? resume.iteration;
    s.usage = resume.usage;
    s.costUsd = resume.costUsd;
    s.lastStopReason = resume.lastStopReason;
    s.lastAssistantText = resume.lastAssistantText;
    s.textPrefix = resume.textPrefix ?? '';
    s.continuations = resume.continuations;
    s.compactions = resume.compactions;
    s.lastCompactionIteration = resume.lastCompactionIteration;
    s.needsCompaction = resume.needsCompaction;
    s.workerQueue = resume.workerQueue;
    s.callsPinned = resume.callsPinned ?? false;
    s.context = resume.context;
    s.hookEvents = resume.hookEvents ?? [];
    s.stopBlocks = resume.stopBlocks ?? 0;
    // A session that handed over while waiting for input is still waiting.
    s.waitingUntil = resume.awaitingInput ? resume.idleDeadline : undefined;
    s.awaitingInput = s.waitingUntil !== undefined;
    return s;
  }

  /**
   * What the next execution needs to go on. Every part is bounded (the conversation by its hard cap,
   * events by count and bytes, pending messages by their limit), so the continue-as-new input stays
   * under Temporal's payload limit: see the sum in constants.ts. `waiting`: a session hands over
   * while it waits for input.
   */
  snapshot(waiting?: { idleDeadline: number }): RunContinuation {
    const context = this.context;
    return {
      conversation: this.conversation.snapshot(),
      iteration: this.iteration,
      usage: this.usage,
      costUsd: this.costUsd,
      ...(this.lastStopReason !== undefined ? { lastStopReason: this.lastStopReason } : {}),
      lastAssistantText: cutBytes(this.lastAssistantText, CARRIED_LAST_TEXT_BYTES),
      ...this.events.carried(),
      continuations: this.continuations,
      compactions: this.compactions,
      ...(this.lastCompactionIteration !== undefined ? { lastCompactionIteration: this.lastCompactionIteration } : {}),
      needsCompaction: this.needsCompaction,
      pendingMessages: this.inbox.list(),
      awaitingInput: waiting !== undefined,
      ...(waiting ? { idleDeadline: waiting.idleDeadline } : {}),
      ...(this.workerQueue ? { workerQueue: this.workerQueue } : {}),
      ...(this.callsPinned ? { callsPinned: true } : {}),
      // Run start's results travel together; a run that never finished its start carries none of them.
      ...(context
        ? {
            context,
            hookEvents: this.hookEvents,
            ...(this.stopBlocks > 0 ? { stopBlocks: this.stopBlocks } : {}),
            turnIterations: this.turnIterations,
          }
        : {}),
      ...(this.textPrefix ? { textPrefix: cutBytes(this.textPrefix, CARRIED_TEXT_PREFIX_BYTES) } : {}),
    };
  }

  get status(): RunStatus {
    if (this.finalStatus) return this.finalStatus;
    if (this.pendingApprovals() > 0) return 'awaiting_approval';
    return this.awaitingInput ? 'awaiting_input' : 'running';
  }

  /**
   * Adds a call's usage and cost; returns the call's cost (null when its price is unknown).
   * `context`: how the call's size bears on compaction. `judge` (an iteration's call): the
   * conversation needs compacting exactly when this call came near the window. `ignore` (a closing
   * call): its prompt was the old conversation, which says nothing about the one that goes on.
   */
  account(response: ModelResponse, model: string, contextWindow: number, context: 'judge' | 'ignore'): number | null {
    this.usage = addUsage(this.usage, response.usage);
    const callCost = costOf(response.model || model, response.usage) ?? costOf(model, response.usage);
    this.costUsd = this.costUsd === null || callCost === null ? null : this.costUsd + callCost;
    const u = response.usage;
    const near =
      u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens + u.outputTokens >
      COMPACT_AT_FRACTION * contextWindow;
    if (context === 'judge') {
      this.needsCompaction = near;
      this.lastCallInputTokens = u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens;
    }
    return callCost;
  }

  /** An answer cut at max_tokens: kept so the continuation completes it in the final text. */
  holdTruncatedText(text: string): void {
    this.textPrefix = cutBytes(this.textPrefix + text, MAX_FINAL_TEXT_BYTES);
  }

  /** The whole answer: held text from cut turns, then this turn's text. */
  completeText(text: string): string {
    const whole = this.textPrefix ? cutBytes(this.textPrefix + text, MAX_FINAL_TEXT_BYTES) : text;
    this.textPrefix = '';
    return whole.trim();
  }

  /**
   * Which iteration limit the next model call would cross. Outside sessions (and in runs recorded
   * before per-message limits) `maxIterations` bounds the run. In a session it bounds each message's
   * turn (docs/sessions.md: the count restarts per message) and `maxSessionIterations` bounds the session.
   */
  limitReached(limits: {
    maxIterations: number;
    maxSessionIterations?: number;
    perMessage: boolean;
  }): 'run' | 'message' | undefined {
    if (!limits.perMessage) return this.iteration >= limits.maxIterations ? 'run' : undefined;
    if (limits.maxSessionIterations !== undefined && this.iteration >= limits.maxSessionIterations) return 'run';
    return this.turnIterations >= limits.maxIterations ? 'message' : undefined;
  }

  overBudget(maxBudgetUsd: number | undefined): boolean {
    return maxBudgetUsd !== undefined && this.costUsd !== null && this.costUsd >= maxBudgetUsd;
  }
}
