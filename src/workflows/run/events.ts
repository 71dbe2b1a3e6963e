import { cutChars, jsonBytes, previewInput } from '../../shared/bounds';
import {
  EVENT_ANSWER_CHARS,
  EVENT_CARRIED_OUTPUT_CHARS,
  EVENT_TEXT_CHARS,
  EVENT_TOOL_OUTPUT_CHARS,
  EVENT_TURN_TEXT_CHARS,
  EVENTS_CARRIED_OVER,
  INPUT_PREVIEW_CHARS,
  MAX_CARRIED_EVENTS_BYTES,
  MAX_EVENTS_PAGE_BYTES,
  MAX_RETAINED_EVENTS,
} from '../../shared/constants';
import type { EventsPage, RunEvent, RunEventInput } from '../../shared/run';

/** Events per `events` query page at most (pages are bounded in bytes too). */
export const EVENTS_PER_PAGE = 200;

/**
 * The run's progress events for live followers (`events` query). Every event is bounded when it
 * is recorded (texts cut, tool arguments previewed), pages are bounded in count and in bytes, and
 * the log keeps the newest MAX_RETAINED_EVENTS: whatever the model or the users send, a page
 * stays far below Temporal's query-result limit.
 */
export class EventLog {
  private readonly events: RunEvent[];
  /**
   * JSON size of each event, measured when a page or a carry first needs it (undefined until then):
   * most events are never paged (a run with no follower), and measuring each as it was recorded cost
   * a `JSON.stringify` per event on the hot path. An `events` query may measure first, and queries are
   * not in history: this is replay-safe only because a recorded event is never changed afterwards
   * (`emit` stores a bounded shallow copy; neither it nor the values it holds, such as a call's
   * `usage`, are written to later). So a size is the same whenever it is measured, and so is what
   * `carried()` writes for continue-as-new.
   */
  private readonly sizes: (number | undefined)[];
  private seq: number;
  private dropped: boolean;

  constructor(
    carried: { events: RunEvent[]; eventSeq: number } | undefined,
    private readonly onChange: () => void = () => {},
  ) {
    this.events = carried?.events.map(bounded) ?? [];
    this.sizes = this.events.map(() => undefined);
    this.seq = carried?.eventSeq ?? 0;
    this.dropped = carried !== undefined && (this.events[0]?.seq ?? 1) > 1;
  }

  get lastSeq(): number {
    return this.seq;
  }

  emit(event: RunEventInput): void {
    const recorded = bounded({ ...event, seq: ++this.seq } as RunEvent);
    this.events.push(recorded);
    this.sizes.push(undefined);
    if (this.events.length > MAX_RETAINED_EVENTS) {
      const excess = this.events.length - MAX_RETAINED_EVENTS;
      this.events.splice(0, excess);
      this.sizes.splice(0, excess);
      this.dropped = true;
    }
    this.onChange();
  }

  /** Events after a cursor. Any argument is accepted: `{after: n}`, a number, or nothing (from the start). */
  page(arg: unknown): EventsPage {
    const after = cursorOf(arg);
    const page: RunEvent[] = [];
    let bytes = 0;
    for (let i = 0; i < this.events.length && page.length < EVENTS_PER_PAGE; i++) {
      const event = this.events[i]!;
      if (event.seq <= after) continue;
      const size = this.sizeAt(i);
      if (page.length > 0 && bytes + size > MAX_EVENTS_PAGE_BYTES) break;
      page.push(event);
      bytes += size;
    }
    return {
      events: page,
      cursor: page.length ? page[page.length - 1]!.seq : this.seq,
      truncated: this.dropped && (this.events[0]?.seq ?? 0) > after + 1,
    };
  }

  /** The JSON size of the event at `i`, measured once. */
  private sizeAt(i: number): number {
    let size = this.sizes[i];
    if (size === undefined) this.sizes[i] = size = jsonBytes(this.events[i]);
    return size;
  }

  /** The newest events, bounded in count and bytes, for the next execution after continue-as-new. */
  carried(): { events: RunEvent[]; eventSeq: number } {
    const kept: RunEvent[] = [];
    let bytes = 0;
    for (let i = this.events.length - 1; i >= 0 && kept.length < EVENTS_CARRIED_OVER; i--) {
      const event = this.events[i]!;
      const carried = event.kind === 'tool_call_finished' ? outputCut(event, EVENT_CARRIED_OUTPUT_CHARS) : event;
      bytes += carried === event ? this.sizeAt(i) : jsonBytes(carried);
      if (bytes > MAX_CARRIED_EVENTS_BYTES) break;
      kept.unshift(carried);
    }
    return { events: kept, eventSeq: this.seq };
  }
}

function cursorOf(arg: unknown): number {
  const raw = typeof arg === 'object' && arg !== null ? (arg as { after?: unknown }).after : arg;
  return typeof raw === 'number' && Number.isFinite(raw) ? raw : 0;
}

/** An event with every text and argument cut to its bound. */
function bounded(raw: RunEvent): RunEvent {
  // Tool names and ids come from the model: keep them short wherever they appear. Events are
  // copied only where something changes (this runs for every event a run records).
  const event =
    ('name' in raw && !shortString(raw.name, 200)) || ('toolUseId' in raw && !shortString(raw.toolUseId, 200))
      ? ({
          ...raw,
          ...('name' in raw ? { name: cutChars(String(raw.name), 200) } : {}),
          ...('toolUseId' in raw ? { toolUseId: cutChars(String(raw.toolUseId), 200) } : {}),
        } as RunEvent)
      : raw;
  // Defensive about shape: carried events come from an earlier execution's state.
  const text = (s: unknown) => (typeof s === 'string' ? cutChars(s, EVENT_TEXT_CHARS) : '');
  switch (event.kind) {
    case 'run_started':
      return { ...event, prompt: text(event.prompt) };
    case 'model_call_finished':
      return shortString(event.text, EVENT_TEXT_CHARS) ? event : { ...event, text: text(event.text) };
    case 'model_call_failed':
      return { ...event, error: text(event.error) };
    case 'rate_limited':
      return { ...event, provider: cutChars(String(event.provider), 64) };
    case 'tool_call_started':
    case 'approval_requested':
      return { ...event, input: previewInput(event.input, INPUT_PREVIEW_CHARS) };
    case 'tool_call_finished':
      return outputCut(event, EVENT_TOOL_OUTPUT_CHARS);
    case 'notice':
      return { ...event, message: text(event.message) };
    case 'user_message':
      return { ...event, message: text(event.message) };
    case 'approval_resolved':
      return event.reason === undefined ? event : { ...event, reason: text(event.reason) };
    case 'reasoning':
    case 'text':
      return typeof event.text === 'string' && event.text.length > EVENT_TURN_TEXT_CHARS
        ? { ...event, text: cutChars(event.text, EVENT_TURN_TEXT_CHARS), truncated: true }
        : event;
    case 'answer':
      return typeof event.text === 'string' && event.text.length > EVENT_ANSWER_CHARS
        ? { ...event, text: cutChars(event.text, EVENT_ANSWER_CHARS), truncated: true }
        : event;
    case 'run_finished':
      return typeof event.finalText === 'string' && event.finalText.length > EVENT_ANSWER_CHARS
        ? { ...event, finalText: cutChars(event.finalText, EVENT_ANSWER_CHARS), truncated: true }
        : event;
    default:
      return event;
  }
}

/** True for a string of at most `max` UTF-16 units: one that `cutChars` leaves as it is. */
function shortString(value: unknown, max: number): boolean {
  return typeof value === 'string' && value.length <= max;
}

type ToolFinished = Extract<RunEvent, { kind: 'tool_call_finished' }>;

/** A tool's output cut to `max` characters, marked `truncated` when anything was left out. */
function outputCut(event: ToolFinished, max: number): ToolFinished {
  const preview = typeof event.preview === 'string' ? event.preview : '';
  if (preview.length <= max) return preview === event.preview ? event : { ...event, preview };
  return { ...event, preview: cutChars(preview, max), truncated: true };
}
