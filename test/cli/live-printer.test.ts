import { RunPrinter } from '../../src/cli/live-events';
import { LiveText, lineSink } from '../../src/cli/live-text';
import type { AgentRunResult, RunEvent, RunEventInput } from '../../src/shared';
import { EVENT_TEXT_CHARS, cutChars } from '../../src/shared';

/** A sink that keeps what was written. */
function capture(styled = false) {
  const chunks: string[] = [];
  return { sink: { styled, write: (c: string) => void chunks.push(c) }, text: () => chunks.join(''), chunks };
}

const tail = (all: string, upTo: number, keep = 10) => ({
  chars: upTo,
  tail: all.slice(Math.max(0, upTo - keep), upTo),
});
const snap = (text: { chars: number; tail: string }, attempt = 1, call = 'run/1') => ({ call, attempt, text });

describe('LiveText', () => {
  test('prints each part of a stream once as heartbeats overlap', () => {
    const c = capture();
    const live = new LiveText(c.sink);
    const all = 'Hello there, streaming world';
    for (const upTo of [5, 5, 12, 9, 20, all.length]) live.onSnapshot(snap(tail(all, upTo)));
    expect(c.text()).toBe(`\n${all}`);
  });

  test('events complete a stream with what it lacks, and repeat nothing', () => {
    const c = capture();
    const live = new LiveText(c.sink);
    live.onSnapshot(snap(tail('\nThe answer is', 13, 100)));
    expect(live.offer('text', 'The answer is 42.')).toBe('extended');
    expect(live.offer('text', 'The answer is 42.')).toBe('covered');
    expect(live.offer('text', 'The answer…', true)).toBe('covered');
    expect(c.text()).toBe('\n\nThe answer is 42.');
    // A heartbeat that arrives late does not print the end a second time.
    live.onSnapshot(snap({ chars: 18, tail: 'answer is 42.' }));
    expect(c.text()).toBe('\n\nThe answer is 42.');
  });

  test('a follower that falls behind says how much it missed, and then refuses to splice events in', () => {
    const c = capture();
    const live = new LiveText(c.sink);
    const all = 'abcdefghijklmnopqrstuvwxyz';
    live.onSnapshot(snap(tail(all, 5)));
    live.onSnapshot(snap(tail(all, 26)));
    expect(c.text()).toBe('\nabcde\n[… 11 characters not shown: the stream outran this follower …]\nqrstuvwxyz');
    expect(live.offer('text', all)).toBe('diverged');
  });

  test('a retried call says its answer starts over, and the new attempt prints from its start', () => {
    const c = capture();
    const live = new LiveText(c.sink);
    live.onSnapshot(snap({ chars: 4, tail: 'Firs' }, 1));
    live.onSnapshot(snap({ chars: 6, tail: 'Second' }, 2));
    expect(c.text()).toBe('\nFirs\n[model call retried (attempt 2): its answer starts over]\n\nSecond');
    expect(live.offer('text', 'Second try')).toBe('extended');
  });

  test('another call than the one this model call began with is ignored (the events have not announced it)', () => {
    const c = capture();
    const live = new LiveText(c.sink);
    live.onSnapshot(snap({ chars: 3, tail: 'one' }, 1, 'run/1'));
    live.onSnapshot(snap({ chars: 3, tail: 'two' }, 1, 'run/7'));
    live.beginCall();
    live.onSnapshot(snap({ chars: 3, tail: 'two' }, 1, 'run/7'));
    expect(c.text()).toBe('\none\n\ntwo');
  });

  test('thinking is labelled: dimmed on a terminal (its control characters made visible), label lines otherwise', () => {
    const styled = capture(true);
    const live = new LiveText(styled.sink);
    live.onSnapshot({ call: 'r/1', attempt: 1, thinking: { chars: 10, tail: 'hm\x1b]0;x\x07ok' } });
    live.onSnapshot({
      call: 'r/1',
      attempt: 1,
      thinking: { chars: 10, tail: 'hm\x1b]0;x\x07ok' },
      text: { chars: 2, tail: 'Hi' },
    });
    expect(styled.text()).toBe('\n\x1b[2;3m✻ thinking\x1b[0m\n\x1b[2mhm␛]0;x␇ok\x1b[22m\n\nHi');
    const plain = capture(false);
    const p = new LiveText(plain.sink);
    p.onSnapshot({ call: 'r/1', attempt: 1, thinking: { chars: 2, tail: 'hm' }, text: { chars: 2, tail: 'Hi' } });
    p.endSection();
    expect(plain.text()).toBe('\n── thinking ──\nhm\n── end of thinking ──\n\nHi\n');
  });

  test('lineSink prints whole lines through a line printer', () => {
    const lines: string[] = [];
    const sink = lineSink((l) => lines.push(l));
    sink.write('ab');
    sink.write('c\nde');
    expect(lines).toEqual(['abc']);
    sink.flush();
    expect(lines).toEqual(['abc', 'de']);
  });
});

describe('RunPrinter', () => {
  let seq = 0;
  const ev = (e: RunEventInput) => ({ ...e, seq: ++seq }) as RunEvent;
  const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  const finished = (iteration: number, text: string, stopReason: 'end_turn' | 'tool_use' = 'end_turn') =>
    ev({
      kind: 'model_call_finished',
      iteration,
      stopReason,
      usage,
      costUsd: 0,
      text: cutChars(text, EVENT_TEXT_CHARS),
    });
  const result = (finalText: string): AgentRunResult => ({
    exitReason: 'completed',
    finalText,
    iterations: 1,
    usage,
    costUsd: 0,
    model: 'm',
  });
  const spinner = { start() {}, stop() {}, clear() {} };

  function printer() {
    const c = capture();
    const p = new RunPrinter(c.sink, (line) => c.sink.write(`${line}\n`), spinner, 'run-1');
    return { c, p };
  }

  test('without a live stream: the text from the events, before the call line, then the answer completed from the result once', () => {
    const { c, p } = printer();
    const long = 'x'.repeat(3000);
    p.events([
      ev({ kind: 'model_call_started', iteration: 1 }),
      finished(1, 'Looking.', 'tool_use'),
      ev({ kind: 'text', iteration: 1, text: 'Looking.' }),
      ev({ kind: 'tool_call_started', toolUseId: 't1', name: 'glob', input: { pattern: '*' } }),
      ev({ kind: 'tool_call_finished', toolUseId: 't1', name: 'glob', isError: false, preview: 'a.ts' }),
      ev({ kind: 'model_call_started', iteration: 2 }),
      finished(2, long),
      ev({ kind: 'text', iteration: 2, text: cutChars(long, EVENT_TEXT_CHARS), truncated: true }),
      ev({ kind: 'answer', text: long }),
      ev({ kind: 'run_finished', exitReason: 'completed', finalText: long }),
    ]);
    expect(p.finish(result(long))).toBe(true);
    const out = c.text();
    expect(out.split('Looking.').length - 1).toBe(1);
    expect(out.indexOf('Looking.')).toBeLessThan(out.indexOf('◆ model call 1'));
    expect(out.indexOf('◆ model call 1')).toBeLessThan(out.indexOf('→ glob'));
    expect(out).toContain(`\n${long}\n◆ model call 2`);
    expect(out.split('x').length - 1).toBe(3000);
  });

  test('an answer the events cut is completed by the result when it is the last, marked when it is not', () => {
    const long = 'y'.repeat(20_000);
    const cut = cutChars(long, 16_000);
    const last = printer();
    last.p.events([
      ev({ kind: 'model_call_started', iteration: 1 }),
      finished(1, long),
      ev({ kind: 'answer', text: cut, truncated: true }),
      ev({ kind: 'run_finished', exitReason: 'completed', finalText: cut, truncated: true }),
    ]);
    expect(last.p.finish(result(long))).toBe(true);
    expect(last.c.text()).toContain(`\n${long}\n◆ model call 1`);

    const session = printer();
    session.p.events([
      ev({ kind: 'model_call_started', iteration: 1 }),
      finished(1, long),
      ev({ kind: 'answer', text: cut, truncated: true }),
      ev({ kind: 'awaiting_input' }),
    ]);
    expect(session.c.text()).toContain(
      `${long.slice(0, 15_999)}…\n[answer cut at 16,000 characters: progress events carry no more of it]\n◆ model call 1`,
    );
  });

  test('streamed live, the events and result add only the unseen end', () => {
    const { c, p } = printer();
    p.events([ev({ kind: 'model_call_started', iteration: 1 })]);
    p.snapshot({ call: 'r/1', attempt: 1, thinking: { chars: 5, tail: 'think' }, text: { chars: 7, tail: 'Answer ' } });
    p.events([
      finished(1, 'Answer done.'),
      ev({ kind: 'reasoning', iteration: 1, text: 'think more' }),
      ev({ kind: 'text', iteration: 1, text: 'Answer done.' }),
      ev({ kind: 'answer', text: 'Answer done.' }),
      ev({ kind: 'run_finished', exitReason: 'completed', finalText: 'Answer done.' }),
    ]);
    expect(p.finish(result('Answer done.'))).toBe(true);
    expect(c.text()).toBe(
      '\n── thinking ──\nthink\n── end of thinking ──\n\nAnswer \n\n── thinking ──\n more\n── end of thinking ──\n\ndone.\n' +
        '◆ model call 1 · 1 in / 1 out tokens · $0 · end_turn\n',
    );
  });

  test('a final text that does not continue what was shown (another text, a gap) is left to the caller to print whole', () => {
    const { p } = printer();
    p.events([ev({ kind: 'model_call_started', iteration: 1 })]);
    p.snapshot({ call: 'r/1', attempt: 1, text: { chars: 9, tail: 'Partial a' } });
    p.events([ev({ kind: 'model_call_failed', iteration: 1, error: 'interrupted' })]);
    expect(p.finish(result('An earlier answer.'))).toBe(false);
  });
});
