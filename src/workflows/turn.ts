import { condition, workflowInfo } from '@temporalio/workflow';
import { toolResultBlock, type ExitReason, type ModelResponse, type RunEventInput } from '../shared';
import type { Conversation } from './conversation';
import type { Inbox } from './inbox';
import type { RunState } from './run-state';
import type { ToolDispatch } from './tool-dispatch';
import { CONTINUE_AFTER_MAX_TOKENS, DONE_TOOL_NUDGE, classifyTurn, truncatedToolCallError } from './turn-outcome';

/** Ends the loop with a given exit reason; never escapes the workflow. */
export class LoopExit {
  constructor(
    readonly exitReason: ExitReason,
    readonly finalText: string,
    readonly error?: { type: string; message: string },
  ) {}

  static interrupted(interrupt: { reason?: string }, lastText: string): LoopExit {
    return new LoopExit('interrupted', lastText, {
      type: 'DurableAgent.Interrupted',
      message: interrupt.reason ? `interrupted: ${interrupt.reason}` : 'interrupted',
    });
  }
}

export interface TurnContext {
  state: RunState;
  conversation: Conversation;
  inbox: Inbox;
  tools: ToolDispatch;
  emit(event: RunEventInput): void;
  index(): void;
  session: boolean;
  sessionIdleMs: number;
  requireDone: boolean;
  maxTokens: number;
  model: string;
  hardened: boolean;
  /** Continues as new; `waiting` when a session hands over while it waits for input. */
  handOver(waiting?: { idleDeadline: number }): Promise<never>;
}

/**
 * What the loop does with one model turn, by its outcome (DESIGN.md §2): run the tools, finish
 * (or, in a session, wait for the next message), refuse, continue a cut answer, resume a paused
 * turn, compact after the context window filled.
 */
export class TurnHandler {
  constructor(private readonly c: TurnContext) {}

  /** Handles the turn just appended to the conversation; an exit ends the loop. */
  async handle(response: ModelResponse): Promise<LoopExit | undefined> {
    const { state, conversation, emit } = this.c;
    const outcome = classifyTurn(response, this.c.hardened);
    switch (outcome.kind) {
      case 'tools': {
        if (outcome.unexpectedStop) {
          emit({
            kind: 'notice',
            message: `unknown stop reason '${outcome.unexpectedStop}' with tool calls; running them`,
          });
        }
        state.textPrefix = '';
        const { results, doneSummary } = await this.c.tools.runTurn(outcome.toolUses);
        conversation.append({ role: 'user', content: results });
        return doneSummary !== undefined ? this.finishTurn(doneSummary) : undefined;
      }
      case 'final': {
        if (this.c.requireDone) {
          // done-tool mode: only the done tool ends the run; a text-only reply gets a nudge.
          conversation.append({ role: 'user', content: DONE_TOOL_NUDGE });
          emit({ kind: 'notice', message: 'answered without calling done; nudging the model to continue' });
          return undefined;
        }
        return this.finishTurn(state.completeText(outcome.text));
      }
      case 'refused':
        return new LoopExit('refused', outcome.text);
      case 'truncated':
        if (outcome.toolUses.length === 0) state.holdTruncatedText(outcome.text);
        conversation.append({
          role: 'user',
          content:
            outcome.toolUses.length > 0
              ? outcome.toolUses.map((t) => toolResultBlock(t.id, truncatedToolCallError(this.c.maxTokens), true))
              : CONTINUE_AFTER_MAX_TOKENS,
        });
        emit({
          kind: 'notice',
          message: `response reached max_tokens (${this.c.maxTokens}); asking the model to continue`,
        });
        return undefined;
      case 'paused':
        // The assistant turn is last in the conversation; the next call lets the model resume it.
        return undefined;
      case 'context_exceeded':
        // Compact and go on, unless compacting just happened and the conversation still does not fit.
        if (state.compactions > 0 && conversation.length <= 2) {
          return new LoopExit('failed', outcome.text || state.lastAssistantText, {
            type: 'DurableAgent.ContextWindowExceeded',
            message: `the conversation does not fit the context window of ${this.c.model} even after compaction`,
          });
        }
        // The partial turn stays; the compaction call summarizes it with the rest.
        state.needsCompaction = true;
        emit({ kind: 'notice', message: `the conversation reached the context window of ${this.c.model}; compacting` });
        return undefined;
      default: {
        const unhandled: never = outcome;
        throw new Error(`unhandled turn outcome ${JSON.stringify(unhandled)}`);
      }
    }
  }

  /**
   * The model answered. A plain run ends; a session waits for the next message, `endSession`, or
   * the idle timeout. Messages sent meanwhile are taken first either way.
   */
  private async finishTurn(text: string): Promise<LoopExit | undefined> {
    const { inbox, emit } = this.c;
    emit({ kind: 'answer', text });
    if (inbox.count > 0) return undefined;
    if (!this.c.session) return new LoopExit('completed', text);
    emit({ kind: 'awaiting_input' });
    return this.waitForInput(text, Date.now() + this.c.sessionIdleMs);
  }

  /**
   * A session waits for input until `idleDeadline`. Its history can still grow meanwhile (every
   * signal a client sends is recorded), so when Temporal suggests continuing as new, it hands over
   * still waiting instead of running into the history limit; the next execution waits on.
   */
  async waitForInput(text: string, idleDeadline: number): Promise<LoopExit | undefined> {
    const { state, inbox } = this.c;
    state.awaitingInput = true;
    this.c.index();
    const handOverDue = () => this.c.hardened && workflowInfo().continueAsNewSuggested;
    const remaining = idleDeadline - Date.now();
    const woken =
      remaining > 0 && (await condition(() => inbox.count > 0 || state.endRequested || handOverDue(), remaining));
    state.awaitingInput = false;
    if (!woken || (state.endRequested && inbox.count === 0)) return new LoopExit('completed', text);
    if (inbox.count === 0 && handOverDue()) await this.c.handOver({ idleDeadline });
    return undefined;
  }
}
