import type { AgentRunResult, RunEvent } from '../shared';
import { EVENT_ANSWER_CHARS, EVENT_TEXT_CHARS } from '../shared';
import { formatEvent } from './format';
import type { LiveSnapshot } from '../client/live-snapshot';
import { LiveText } from './live-text';
import type { LiveSink } from './live-text';
import type { Spinner } from './spinner';

type Answer = Extract<RunEvent, { kind: 'answer' }>;

/** Events that end a model call's part of the log: its reasoning, text and answer come before them. */
const ENDS_CALL = new Set<RunEvent['kind']>([
  'model_call_started',
  'model_call_failed',
  'tool_call_started',
  'approval_requested',
  'awaiting_input',
  'user_message',
  'run_finished',
]);

const nf = new Intl.NumberFormat('en-US');
const CUT_NOTE = `[answer cut at ${nf.format(EVENT_ANSWER_CHARS)} characters: progress events carry no more of it]`;

/**
 * Prints a run's events and its live text in one readable order: for each model call, its
 * thinking and text (streamed live while it runs, completed from the `reasoning`, `text` and
 * `answer` events after), then its summary line, then its tool calls. No text is printed twice,
 * and the final answer is completed from the result exactly once (`finish`).
 */
export class RunPrinter {
  /** A model call is in flight: its heartbeats are worth polling. */
  inFlight = false;
  private readonly live: LiveText;
  /** The summary line of a call whose answer the result may still complete: printed after it. */
  private heldLine: string | undefined;
  /** An answer the events cut: if it was not the run's last, the cut is marked. */
  private cutAnswer: Answer | undefined;
  /** The last model call stopped at `max_tokens`: the next one may continue its answer. */
  private cutAtMaxTokens = false;

  constructor(
    sink: LiveSink,
    private readonly out: (line: string) => void,
    private readonly spinner: Pick<Spinner, 'start' | 'stop' | 'clear'>,
    private readonly runId: string,
  ) {
    this.live = new LiveText(sink);
  }

  /** The in-flight call's newest heartbeat details. */
  snapshot(snapshot: LiveSnapshot): void {
    if (!this.inFlight) return;
    if (snapshot.text || snapshot.thinking) this.spinner.stop();
    this.live.onSnapshot(snapshot);
  }

  /** One page of events, in order. */
  events(events: RunEvent[]): void {
    const done = new Set<number>();
    events.forEach((event, i) => {
      if (done.has(event.seq)) return;
      if (event.kind !== 'run_finished') this.settleCutAnswer();
      switch (event.kind) {
        case 'model_call_started':
          this.live.beginCall(this.cutAtMaxTokens);
          this.inFlight = true;
          this.line(formatEvent(event, this.runId));
          // A spinner until the first streamed words (terminals only).
          this.spinner.start(`model call ${event.iteration}…`);
          return;
        case 'model_call_finished': {
          this.inFlight = false;
          this.cutAtMaxTokens = event.stopReason === 'max_tokens';
          this.spinner.stop();
          // This call's reasoning, text and answer follow in the log: print them before its summary line.
          for (const next of events.slice(i + 1)) {
            if (ENDS_CALL.has(next.kind)) break;
            if (next.kind === 'reasoning' || next.kind === 'text' || next.kind === 'answer') {
              this.content(next);
              done.add(next.seq);
            }
          }
          // Runs that log no text events: the call's text as this event has it.
          this.live.offer('text', event.text, event.text.length >= EVENT_TEXT_CHARS - 1 && event.text.endsWith('…'));
          const line = formatEvent(event, this.runId);
          if (this.cutAnswer) this.heldLine = line;
          else this.line(line);
          return;
        }
        case 'reasoning':
        case 'text':
        case 'answer':
          this.content(event);
          return;
        case 'notice':
        case 'user_message':
          this.line(formatEvent(event, this.runId));
          return;
        default:
          this.spinner.stop();
          this.inFlight &&= event.kind !== 'model_call_failed' && event.kind !== 'run_finished';
          this.line(formatEvent(event, this.runId));
      }
    });
  }

  /**
   * The run ended: completes its final answer from the result (only what was not printed yet).
   * Returns true when the answer is now printed whole; false when it could not be continued (a
   * gap, another text) and the caller prints it whole.
   */
  finish(result: AgentRunResult): boolean {
    this.cutAnswer = undefined;
    const outcome = result.finalText.trim() ? this.live.offer('text', result.finalText) : 'diverged';
    this.close();
    return outcome !== 'diverged';
  }

  /** Ends an open text section and prints a held summary line (before the caller prints something of its own). */
  close(): void {
    this.live.endSection();
    if (this.heldLine !== undefined) this.out(this.heldLine);
    this.heldLine = undefined;
  }

  private content(event: Extract<RunEvent, { kind: 'reasoning' | 'text' | 'answer' }>): void {
    const cut = event.truncated === true;
    this.live.offer(event.kind === 'reasoning' ? 'thinking' : 'text', event.text, cut);
    if (event.kind === 'answer' && cut) this.cutAnswer = event;
  }

  /** The cut answer was not the run's last (more events came): mark where the events cut it. */
  private settleCutAnswer(): void {
    if (!this.cutAnswer) return;
    this.cutAnswer = undefined;
    this.live.markCut('text', CUT_NOTE);
    if (this.heldLine !== undefined) this.out(this.heldLine);
    this.heldLine = undefined;
  }

  private line(line: string | undefined): void {
    if (!line) return;
    this.live.endSection();
    this.spinner.clear();
    this.out(line);
  }
}
