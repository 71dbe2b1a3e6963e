import {
  COMPACT_AT_FRACTION,
  MAX_FINAL_TEXT_BYTES,
  ZERO_USAGE,
  addUsage,
  costOf,
  cutBytes,
  type ExitReason,
  type ModelResponse,
  type RunContinuation,
  type RunStatus,
  type StopReason,
  type Usage,
} from '../../shared';

/**
 * The counters and flags of one run, carried across continue-as-new. Plain data with the few
 * rules that keep it consistent: cost is `null` once any call's price is unknown (a partial sum
 * would under-report), the status is derived, never stored twice.
 */
export class RunState {
  iteration: number;
  /** Model calls since the session's current message began; equal to `iteration` outside sessions. */
  turnIterations: number;
  usage: Usage;
  costUsd: number | null;
  lastStopReason: StopReason | null | undefined;
  /** The newest non-empty assistant text: what an interrupted or failed run reports. */
  lastAssistantText: string;
  /** Text of answers cut at max_tokens; the answer that continues them is appended to it. */
  textPrefix: string;
  continuations: number;
  compactions: number;
  /** The iteration at which the conversation was last compacted by a summary. */
  lastCompactionIteration: number | undefined;
  needsCompaction: boolean;
  finalStatus: ExitReason | undefined;
  awaitingInput = false;
  /** tool_use id → tool name of the calls running now. */
  readonly activeTools = new Map<string, string>();
  interrupt: { reason?: string } | undefined;
  /** A waiting session was asked to end (`endSession`). */
  endRequested = false;

  constructor(
    resume: RunContinuation | undefined,
    private readonly pendingApprovals: () => number,
  ) {
    this.iteration = resume?.iteration ?? 0;
    this.turnIterations = resume?.turnIterations ?? this.iteration;
    this.usage = resume?.usage ?? { ...ZERO_USAGE };
    this.costUsd = resume ? resume.costUsd : 0;
    this.lastStopReason = resume?.lastStopReason;
    this.lastAssistantText = resume?.lastAssistantText ?? '';
    this.textPrefix = resume?.textPrefix ?? '';
    this.continuations = resume?.continuations ?? 0;
    this.compactions = resume?.compactions ?? 0;
    this.lastCompactionIteration = resume?.lastCompactionIteration;
    this.needsCompaction = resume?.needsCompaction ?? false;
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
    if (context === 'judge') this.needsCompaction = near;
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
