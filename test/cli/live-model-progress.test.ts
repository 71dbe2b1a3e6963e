import fc from 'fast-check';
import { PROGRESS_HEARTBEAT_MIN_GAP_MS, modelProgress } from '../../src/activities/model-progress';
import { PROGRESS_TAIL_CHARS, parseModelProgress, type ModelProgressDetails } from '../../src/shared/live-progress';

/** The model activity's progress reporter, with a fake clock and the heartbeats it sent. */
function reporter(options: Parameters<typeof modelProgress>[2] = {}) {
  let clock = 1_000_000;
  const beats: ModelProgressDetails[] = [];
  const ctx = { heartbeat: (d?: unknown) => void beats.push(JSON.parse(JSON.stringify(d)) as ModelProgressDetails) };
  const { heartbeat, progress } = modelProgress(ctx, 'claude-test', { now: () => clock, ...options });
  return { heartbeat, progress: progress!, beats, tick: (ms: number) => void (clock += ms) };
}

test('heartbeats keep the fields Pending Activities showed before (model call, elapsedSeconds) and say the phase', () => {
  const r = reporter();
  r.tick(2_400);
  r.heartbeat();
  expect(r.beats).toEqual([{ 'model call': 'claude-test', elapsedSeconds: 2, phase: 'waiting' }]);
  const summary = reporter({ label: 'closing summary' });
  summary.heartbeat();
  expect(summary.beats[0]).toMatchObject({ 'closing summary': 'claude-test' });
});

test('deltas heartbeat at most once per minimum gap; the keep-alive heartbeat carries the newest tail', () => {
  const r = reporter();
  r.progress({ kind: 'text', delta: 'Hel' });
  r.progress({ kind: 'text', delta: 'lo' });
  r.tick(PROGRESS_HEARTBEAT_MIN_GAP_MS - 1);
  r.progress({ kind: 'text', delta: ', wor' });
  expect(r.beats).toHaveLength(1);
  expect(r.beats[0]!.text).toEqual({ chars: 3, tail: 'Hel' });
  r.tick(1);
  r.progress({ kind: 'text', delta: 'ld' });
  expect(r.beats).toHaveLength(2);
  expect(r.beats[1]).toMatchObject({ phase: 'text', text: { chars: 12, tail: 'Hello, world' } });
  r.progress({ kind: 'thinking', delta: 'hmm' });
  r.heartbeat();
  expect(r.beats).toHaveLength(3);
  expect(r.beats[2]).toMatchObject({ phase: 'thinking', thinking: { chars: 3, tail: 'hmm' }, text: { chars: 12 } });
});

test('a thousand deltas in one burst send one heartbeat, not a thousand', () => {
  const r = reporter();
  for (let i = 0; i < 1000; i++) r.progress({ kind: 'text', delta: 'x' });
  expect(r.beats).toHaveLength(1);
});

test('details stay bounded whatever the answer length: tails keep the newest characters, chars keeps counting', () => {
  const r = reporter();
  const line = (i: number) => `line ${i} ${'ab'.repeat(20)}\n`;
  let all = '';
  for (let i = 0; i < 20_000; i++) {
    all += line(i);
    r.progress({ kind: 'text', delta: line(i) });
    r.progress({ kind: 'thinking', delta: line(i) });
  }
  r.heartbeat();
  const last = r.beats[r.beats.length - 1]!;
  expect(last.text!.chars).toBe(all.length);
  expect(last.text!.tail).toBe(all.slice(-PROGRESS_TAIL_CHARS));
  expect(last.thinking!.tail).toBe(all.slice(-PROGRESS_TAIL_CHARS));
  expect(JSON.stringify(last).length).toBeLessThan(2 * PROGRESS_TAIL_CHARS + 300);
});

test('a tail never starts inside a surrogate pair, and its offset stays exact', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { maxLength: 60 }), (deltas) => {
      const r = reporter({ tailChars: 16 });
      for (const d of deltas) r.progress({ kind: 'text', delta: d });
      r.heartbeat();
      const all = deltas.join('');
      const tail = r.beats[r.beats.length - 1]!.text;
      if (all.length === 0) return tail === undefined;
      const t = tail!;
      const code = t.tail.charCodeAt(0);
      return (
        t.chars === all.length &&
        t.tail.length <= 16 &&
        all.slice(t.chars - t.tail.length) === t.tail &&
        !(code >= 0xdc00 && code <= 0xdfff)
      );
    }),
  );
});

test('progress ignores what is not a text or thinking delta (a provider passes on what the model sent)', () => {
  const r = reporter();
  const bad: unknown[] = [
    null,
    {},
    { kind: 'tool', delta: 'x' },
    { kind: 'text', delta: 42 },
    { kind: 'text', delta: '' },
  ];
  for (const b of bad) r.progress(b as never);
  r.heartbeat();
  expect(r.beats).toEqual([{ 'model call': 'claude-test', elapsedSeconds: 0, phase: 'waiting' }]);
});

test('parseModelProgress accepts what modelProgress sends and refuses malformed details', () => {
  const r = reporter();
  r.progress({ kind: 'text', delta: 'abc' });
  expect(parseModelProgress(r.beats[0])).toEqual({ text: { chars: 3, tail: 'abc' } });
  expect(parseModelProgress({ 'model call': 'm', elapsedSeconds: 1 })).toBeUndefined();
  expect(parseModelProgress({ text: { chars: 1, tail: 'abc' } })).toBeUndefined();
  expect(parseModelProgress({ text: { chars: '3', tail: 'abc' } })).toBeUndefined();
  expect(parseModelProgress('text')).toBeUndefined();
});
