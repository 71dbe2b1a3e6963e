import type { StreamTail } from '../shared/live-progress';
import type { LiveSnapshot } from '../client/live-snapshot';
import { visibleText } from './terminal-text';

export type StreamKind = 'thinking' | 'text';

/** Where live text goes: raw chunks (no newline added), and whether ANSI styling may be used. */
export interface LiveSink {
  write(chunk: string): void;
  /** True on a terminal: thinking is dimmed. Otherwise it is marked with plain label lines. */
  styled: boolean;
}

/** A sink on a stream: styled only on a terminal that is not `dumb`, and not with NO_COLOR. */
export function streamSink(stream: NodeJS.WriteStream): LiveSink {
  return {
    write: (chunk) => void stream.write(chunk),
    styled: stream.isTTY === true && process.env.TERM !== 'dumb' && !process.env.NO_COLOR,
  };
}

/** A sink that prints whole lines through `out` (which adds the newline): for callers with only a line printer. */
export function lineSink(out: (line: string) => void): LiveSink & { flush(): void } {
  let partial = '';
  return {
    styled: false,
    write(chunk) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) out(line);
    },
    flush() {
      if (partial) out(partial);
      partial = '';
    },
  };
}

/** How a text from the events or the result relates to what was printed of the same stream. */
export type Offered = 'extended' | 'covered' | 'diverged';

/** One stream of one model call: what was printed, from its start. */
class Printed {
  /** Stream offset printed up to (heartbeat `chars`). */
  streamChars = 0;
  /** The text printed, from the stream's start; meaningless once `gapped`. */
  text = '';
  /** Part of the stream was never seen (the follower fell behind the heartbeat tails). */
  gapped = false;
  /**
   * The text of earlier calls this one continues (an answer cut at `max_tokens`): the events and the
   * result carry the joined answer, which then extends `base + text`.
   */
  base = '';
}

const LABEL = {
  styledStart: '\x1b[2;3m✻ thinking\x1b[0m\n',
  plainStart: '── thinking ──\n',
  plainEnd: '── end of thinking ──\n',
};

/**
 * Prints a run's model text as it streams (from heartbeat snapshots) and completes it from the
 * events and the result without printing any part twice: a text is compared with what was printed
 * of the same stream and only what extends it is written. Thinking is dimmed and labelled.
 */
export class LiveText {
  private call: string | undefined;
  private attempt = 0;
  private streams = { thinking: new Printed(), text: new Printed() };
  private open: StreamKind | undefined;
  private atLineStart = true;

  constructor(private readonly sink: LiveSink) {}

  /**
   * A new model call: what follows belongs to it. `continues`: it continues the previous call's
   * answer, which was cut at `max_tokens`; the joined answer then extends what both printed.
   */
  beginCall(continues = false): void {
    this.endSection();
    this.call = undefined;
    this.attempt = 0;
    const previous = this.streams.text;
    this.streams = { thinking: new Printed(), text: new Printed() };
    if (continues && !previous.gapped) this.streams.text.base = previous.base + previous.text;
  }

  /** True once anything of this call's `kind` stream was printed. */
  printed(kind: StreamKind): boolean {
    const s = this.streams[kind];
    return s.gapped || s.text.length > 0;
  }

  /**
   * The in-flight call's newest heartbeat. The first call seen after `beginCall` is this model
   * call's; another one (a later call the events have not announced yet) is ignored until then.
   */
  onSnapshot(snapshot: LiveSnapshot): void {
    if (this.call === undefined) this.call = snapshot.call;
    if (snapshot.call !== this.call) return;
    if (snapshot.attempt !== this.attempt) {
      if (this.attempt !== 0 && (this.printed('thinking') || this.printed('text'))) {
        this.endSection();
        this.notice(`[model call retried (attempt ${snapshot.attempt}): its answer starts over]`);
      }
      this.attempt = snapshot.attempt;
      const base = this.streams.text.base;
      this.streams = { thinking: new Printed(), text: new Printed() };
      this.streams.text.base = base;
    }
    if (snapshot.thinking) this.onTail('thinking', snapshot.thinking);
    if (snapshot.text) this.onTail('text', snapshot.text);
  }

  /**
   * A stream's text from its start, from an event or the result. `cut`: the text is only a prefix
   * (the event cut it). Writes what extends the printed text; `diverged` when it does not continue
   * it (a gap, a retry, a different text), and then writes nothing.
   */
  offer(kind: StreamKind, text: string, cut = false): Offered {
    const s = this.streams[kind];
    if (s.gapped) return 'diverged';
    const known = (cut && text.endsWith('…') ? text.slice(0, -1) : text).trimStart();
    // A continued answer: the joined text extends what this call and the ones it continues printed;
    // a text of this call alone (its event) extends this call's part.
    const joined = (s.base + s.text).trimStart();
    const shown = s.base && (known.startsWith(joined) || joined.startsWith(known)) ? joined : s.text.trimStart();
    if (known.startsWith(shown)) {
      const rest = known.slice(shown.length);
      if (!rest) return 'covered';
      this.write(kind, rest);
      s.text += rest;
      // A later heartbeat of the same call continues after what the events printed.
      s.streamChars = Math.max(s.streamChars, s.text.length);
      return 'extended';
    }
    return shown.startsWith(known) ? 'covered' : 'diverged';
  }

  /** Closes an open section (newline, end of dim/label) so a progress line can follow. */
  endSection(): void {
    if (this.open === 'thinking' && !this.sink.styled) {
      this.newline();
      this.sink.write(LABEL.plainEnd);
      this.atLineStart = true;
    }
    this.open = undefined;
    this.newline();
  }

  /** Ends a stream the events cut: an ellipsis where the cut is, then `note` on a line of its own. */
  markCut(kind: StreamKind, note: string): void {
    this.write(kind, '…');
    this.endSection();
    this.notice(note);
  }

  /** A line of its own between live text, e.g. a gap or retry note. */
  notice(line: string): void {
    this.newline();
    this.sink.write(`${line}\n`);
    this.atLineStart = true;
  }

  private onTail(kind: StreamKind, tail: StreamTail): void {
    const s = this.streams[kind];
    if (tail.chars <= s.streamChars) return;
    const start = tail.chars - tail.tail.length;
    let fresh: string;
    if (start > s.streamChars) {
      const missed = start - s.streamChars;
      this.section(kind);
      this.notice(`[… ${missed.toLocaleString('en-US')} characters not shown: the stream outran this follower …]`);
      s.gapped = true;
      fresh = tail.tail;
    } else {
      fresh = tail.tail.slice(s.streamChars - start);
    }
    s.streamChars = tail.chars;
    if (!s.gapped) s.text += fresh;
    this.write(kind, fresh);
  }

  private section(kind: StreamKind): void {
    if (this.open === kind) return;
    this.endSection();
    // A blank line sets the model's words apart from the progress lines around them.
    this.sink.write('\n');
    if (kind === 'thinking') this.sink.write(this.sink.styled ? LABEL.styledStart : LABEL.plainStart);
    this.open = kind;
  }

  private write(kind: StreamKind, chunk: string): void {
    if (!chunk) return;
    this.section(kind);
    // The model's words are untrusted on a terminal and in a file someone may `cat` later alike.
    const shown = visibleText(chunk);
    this.sink.write(kind === 'thinking' && this.sink.styled ? `\x1b[2m${shown}\x1b[22m` : shown);
    this.atLineStart = chunk.endsWith('\n');
  }

  private newline(): void {
    if (!this.atLineStart) this.sink.write('\n');
    this.atLineStart = true;
  }
}
