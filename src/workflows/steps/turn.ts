import { condition, log, workflowInfo } from '@temporalio/workflow';
import {
  thinkingOf,
  textOf,
  toolResultBlock,
  type ExitReason,
  type ModelResponse,
  type RunEventInput,
} from '../../shared';
import type { Conversation } from '../run/conversation';
import type { AnswerCheck } from '../calls/answer-check';
import type { Hooks } from '../calls/hooks';
import type { Inbox } from '../run/inbox';
import type { RunState } from '../run/run-state';
import type { ToolDispatch } from './tool-turn';
import { replyProse } from '../../shared/text-protocol';
import { handOverSuggested } from './hand-over';
import { observationOf, parseBoundedReply, runBoundedTurn } from './bounded-turn';
import {
  CONTINUE_AFTER_MAX_TOKENS,
  DONE_TOOL_NUDGE,
  classifyTurn,
  toolCallsAtQuietStop,
  truncatedToolCallError,
} from './turn-outcome';

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
  hooks: Hooks;
  /** Tools the model may call under the text protocol (`toolProtocol: 'xml'`); undefined: native tool calls. */
  textTools?: string[];
  /** Under the text protocol, the run's MCP tools the model may call too (they change between turns). */
  mcpToolNames?: () => string[];
  /** Runs with `outputSchema`: checks each final answer (docs/output.md). */
  answers?: AnswerCheck;
  /** Continues as new; `waiting` when a session hands over while it waits for input. */
  handOver(waiting?: { idleDeadline: number }): Promise<never>;
}

/**
 * What the loop does with one model turn, by its outcome (docs/architecture.md#stop-reasons): run the tools, finish
 * (or, in a session, wait for the next message), refuse, continue a cut answer, resume a paused
 * turn, compact after the context window filled.
 */
export class TurnHandler {
  constructor(private readonly c: TurnContext) {}

  /** Handles the turn just appended to the conversation; an exit ends the loop. */
  async handle(response: ModelResponse): Promise<LoopExit | undefined> {
    const { state, conversation, emit } = this.c;
    let outcome = classifyTurn(response);
    const quietStopCalls = toolCallsAtQuietStop(response);
    if (outcome.kind === 'final' && !this.c.textTools && quietStopCalls.length > 0) {
      emit({
        kind: 'notice',
        message: `stop reason ${response.stopReason === null ? 'null' : `'${response.stopReason}'`} with tool calls; running them`,
      });
      outcome = { kind: 'tools', toolUses: quietStopCalls };
    }
    // An answer's text is carried once, by the `answer` event (a cut answer's first part included).
    const answering =
      outcome.kind === 'final' || (outcome.kind === 'truncated' && outcome.toolUses.length === 0 && !this.c.textTools);
    this.narrate(response, answering && !this.c.requireDone);
    if (outcome.kind === 'final' && this.c.textTools) {
      // A reply cut at max_tokens and continued is read whole: a `<tool_code>` block may span both.
      const whole = state.textPrefix + outcome.text;
      state.textPrefix = '';
      const handled = await this.textToolTurn(whole);
      if ('exit' in handled) return handled.exit;
      outcome = { kind: 'final', text: handled.answer };
    }
    switch (outcome.kind) {
      case 'tools': {
        if (outcome.unexpectedStop) {
          emit({
            kind: 'notice',
            message: `unknown stop reason '${outcome.unexpectedStop}' with tool calls; running them`,
          });
        }
        state.textPrefix = '';
        const { results, doneSummary } = await runBoundedTurn(this.c.tools, outcome.toolUses, emit);
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
   * Seed 004's order of events for a turn: its reasoning, then its text (unless that text is the
   * final answer, which the `answer` event carries once), then per tool call its start and result.
   */
  private narrate(response: ModelResponse, isAnswer: boolean): void {
    const iteration = this.c.state.iteration;
    const thinking = thinkingOf(response.content);
    if (thinking) this.c.emit({ kind: 'reasoning', iteration, text: thinking });
    const text = textOf(response.content);
    // Under the text protocol the reply is read first: its thought is narrated, its call is a tool call.
    if (text && !isAnswer && !this.c.textTools) this.c.emit({ kind: 'text', iteration, text });
  }

  /**
   * A text-only turn under the text protocol: one `<tool_code>` call runs and its result goes back
   * as an `<observation>`; a malformed block gets an observation that says what was wrong; no
   * block (or `<final_answer>`) is the final answer, handled as any other.
   */
  private async textToolTurn(text: string): Promise<{ exit: LoopExit | undefined } | { answer: string }> {
    const { state, conversation, emit } = this.c;
    const parsed = parseBoundedReply(text, [...(this.c.textTools ?? []), ...(this.c.mcpToolNames?.() ?? [])]);
    // The model's words only (its thought before a block); the call itself is narrated as a tool call.
    // A final reply is the answer, unless only `done` may end the run: then it is narrated as text.
    const prose = parsed.kind === 'final' ? (this.c.requireDone ? parsed.text : '') : replyProse(text);
    if (prose) emit({ kind: 'text', iteration: state.iteration, text: prose });
    if (parsed.kind === 'final') return { answer: parsed.text };
    if (parsed.kind === 'malformed') {
      emit({ kind: 'notice', message: 'the model wrote a tool call the text protocol cannot run; told it why' });
      conversation.append({ role: 'user', content: parsed.observation });
      return { exit: undefined };
    }
    state.textPrefix = '';
    const call = {
      type: 'tool_use' as const,
      id: `text-call-${state.iteration}`,
      name: parsed.name,
      input: parsed.input,
    };
    const { results, doneSummary } = await this.c.tools.runTurn([call]);
    const result = results[0]!;
    conversation.append({
      role: 'user',
      content: observationOf(parsed.name, result.content, result.is_error === true),
    });
    return { exit: doneSummary !== undefined ? await this.finishTurn(doneSummary) : undefined };
  }

  /**
   * The message's turn reached `maxIterations` in a session: the closing summary is this message's
   * answer, and the session waits for the next one (in a session the iteration limit counts per message).
   */
  async endMessageAtLimit(summary: string, maxIterations: number): Promise<LoopExit | undefined> {
    const { state, conversation, emit } = this.c;
    log.warn('run reached maxIterations for a message; answering with a summary', {
      workflowId: workflowInfo().workflowId,
      maxIterations,
      iteration: state.iteration,
    });
    emit({
      kind: 'notice',
      message: `this message's turn reached maxIterations (${maxIterations}); answered with a summary`,
    });
    conversation.append({ role: 'assistant', content: [{ type: 'text', text: summary }] });
    state.lastAssistantText = summary;
    return this.finishTurn(summary, false);
  }

  /**
   * The model answered. A Stop hook may keep it going; a plain run ends; a session waits for the
   * next message, `endSession`, or the idle timeout. Messages sent meanwhile are taken first either way.
   */
  private async finishTurn(text: string, stopHooks = true): Promise<LoopExit | undefined> {
    const { inbox, emit } = this.c;
    if (stopHooks && this.c.inbox.count === 0) {
      const keepGoing = await this.c.hooks.stopping();
      if (keepGoing !== undefined) {
        // Not the answer after all: narrated like any other turn's text.
        emit({ kind: 'text', iteration: this.c.state.iteration, text });
        this.c.conversation.append({ role: 'user', content: `[Stop hook] ${keepGoing}` });
        return undefined;
      }
    }
    if (stopHooks && this.c.answers) {
      const verdict = await this.c.answers.check(text);
      if (verdict.kind === 'invalid') return verdict.exit;
      text = verdict.text;
    }
    emit({ kind: 'answer', text });
    const stopRun = this.c.hooks.stopRunRequested;
    if (stopRun !== undefined) return LoopExit.interrupted({ reason: stopRun }, text);
    if (inbox.count > 0) {
      this.nextMessage();
      return undefined;
    }
    if (!this.c.session) return new LoopExit('completed', text);
    emit({ kind: 'awaiting_input' });
    return this.waitForInput(text, Date.now() + this.c.sessionIdleMs);
  }

  /** A hook blocked the messages that would have begun a turn: a session waits again, a run ends. */
  async messageBlocked(): Promise<LoopExit | undefined> {
    const text = this.c.state.lastAssistantText;
    if (!this.c.session) return new LoopExit('completed', text);
    this.c.emit({ kind: 'awaiting_input' });
    return this.waitForInput(text, Date.now() + this.c.sessionIdleMs);
  }

  /** A session's next message begins a new turn: its iteration count starts again. */
  private nextMessage(): void {
    if (this.c.session) this.c.state.turnIterations = 0;
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
    const handOverDue = handOverSuggested;
    const remaining = idleDeadline - Date.now();
    const woken =
      remaining > 0 &&
      (await condition(
        () => inbox.count > 0 || state.endRequested || handOverDue() || this.c.hooks.stopRunRequested !== undefined,
        remaining,
      ));
    state.awaitingInput = false;
    const stopRun = this.c.hooks.stopRunRequested;
    if (stopRun !== undefined) return LoopExit.interrupted({ reason: stopRun }, text);
    if (!woken || (state.endRequested && inbox.count === 0)) return new LoopExit('completed', text);
    if (inbox.count === 0 && handOverDue()) await this.c.handOver({ idleDeadline });
    this.nextMessage();
    return undefined;
  }
}
