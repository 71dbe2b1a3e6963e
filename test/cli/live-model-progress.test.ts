import fc from 'fast-check';
import {
  FIRST_STREAM_HEARTBEAT_MS,
  LOCAL_PROGRESS_GAP_MS,
  heartbeatGapMs,
  modelProgress,
} from '../../src/activities/model-progress';
import {
  PROGRESS_TAIL_CHARS,
  parseModelProgress,
  watchLocalProgress,
  type LocalProgress,
  type ModelProgressDetails,
} from '../../src/shared/live-progress';

const GAP = 8_000;

/** The model activity's progress reporter, with a fake clock and the heartbeats it sent. */
function reporter(options: Parameters<typeof modelProgress>[2] = {}) {
  let clock = 1_000_000;
  const beats: ModelProgressDetails[] = [];
  const ctx = { heartbeat: (d?: unknown) => void beats.push(JSON.parse(JSON.stringify(d)) as ModelProgressDetails) };
  const { heartbeat, progress } = modelProgress(ctx, 'claude-test', { now: () => clock, gapMs: GAP, ...options });
  const tick = (ms: number) => void (clock += ms);
  /** The provider's keep-alive once the longest gap is over: always sends. */
  const flush = () => {
    tick(GAP);
    heartbeat();
  };
  return { heartbeat, progress: progress!, beats, tick, flush };
}

test('heartbeats keep the fields Pending Activities showed before (model call, elapsedSeconds) and say the phase', () => {
  const r = reporter();
  r.flush();
  expect(r.beats).toEqual([{ 'model call': 'claude-test', elapsedSeconds: 8, phase: 'waiting' }]);
  const summary = reporter({ label: 'closing summary' });
  summary.flush();
  expect(summary.beats[0]).toMatchObject({ 'closing summary': 'claude-test' });
});

test('a waiting call heartbeats once per longest gap, however often the provider asks', () => {
  const r = reporter();
  for (let t = 0; t < 3 * GAP; t += 1_000) {
    r.tick(1_000);
    r.heartbeat();
  }
  expect(r.beats).toHaveLength(3);
});

test('once text streams: a heartbeat 1 s after the first delta, then gaps doubling up to the longest', () => {
  const r = reporter();
  r.tick(500);
  r.progress({ kind: 'text', delta: 'Hel' });
  const sentAt: number[] = [];
  // 20 s of deltas every 100 ms, the provider's keep-alive every second besides.
  for (let ms = 100; ms <= 20_000; ms += 100) {
    r.tick(100);
    r.progress({ kind: 'text', delta: 'x' });
    if (ms % 1_000 === 0) r.heartbeat();
    if (r.beats.length > sentAt.length) sentAt.push(ms);
  }
  expect(sentAt).toEqual([FIRST_STREAM_HEARTBEAT_MS, 3_000, 7_000, 15_000]);
  // The default 20 s heartbeat timeout gives this 8 s longest gap: four heartbeats in a 20 s stream.
  // Each carries the newest tail.
  expect(r.beats[0]).toMatchObject({ phase: 'text', text: { chars: 13, tail: 'Hel' + 'x'.repeat(10) } });
  r.progress({ kind: 'thinking', delta: 'hmm' });
  r.flush();
  expect(r.beats[r.beats.length - 1]).toMatchObject({ phase: 'thinking', thinking: { chars: 3, tail: 'hmm' } });
});

test('beatNow sends at once, whatever the gap, with the newest tail, and the gap counts from it', () => {
  let clock = 1_000_000;
  const beats: ModelProgressDetails[] = [];
  const ctx = { heartbeat: (d?: unknown) => void beats.push(d as ModelProgressDetails) };
  const r = modelProgress(ctx, 'claude-test', { now: () => clock, gapMs: GAP });
  r.progress!({ kind: 'text', delta: 'Hi' });
  clock += 200;
  r.heartbeat();
  expect(beats).toHaveLength(0);
  r.beatNow();
  expect(beats).toEqual([
    { 'model call': 'claude-test', elapsedSeconds: 0, phase: 'text', text: { chars: 2, tail: 'Hi' } },
  ]);
  clock += FIRST_STREAM_HEARTBEAT_MS - 1;
  r.heartbeat();
  expect(beats).toHaveLength(1);
});

test('a thousand deltas in one burst send at most one heartbeat, not a thousand', () => {
  const r = reporter();
  r.tick(GAP);
  for (let i = 0; i < 1000; i++) r.progress({ kind: 'text', delta: 'x' });
  expect(r.beats.length).toBeLessThanOrEqual(1);
});

test('the longest gap is 40 % of the heartbeat timeout, between 1 s and 10 s', () => {
  expect(heartbeatGapMs(20_000)).toBe(8_000);
  expect(heartbeatGapMs(10_000)).toBe(4_000);
  expect(heartbeatGapMs(2_000)).toBe(1_000);
  expect(heartbeatGapMs(600_000)).toBe(10_000);
  expect(heartbeatGapMs(undefined)).toBe(10_000);
});

test('a follower in this process gets the tails at once, the end of a burst included, and nothing without one', async () => {
  const heartbeats: unknown[] = [];
  const info = {
    activityId: '7',
    attempt: 2,
    heartbeatTimeoutMs: 20_000,
    workflowExecution: { workflowId: 'wf-local', runId: 'run-1' },
  };
  const seen: LocalProgress[] = [];
  const unwatch = watchLocalProgress('wf-local', (p) => seen.push(p));
  const { progress } = modelProgress({ heartbeat: (d) => heartbeats.push(d), info }, 'claude-test');
  progress!({ kind: 'text', delta: 'Hello' });
  expect(seen).toEqual([{ call: 'run-1/7', attempt: 2, text: { chars: 5, tail: 'Hello' } }]);
  progress!({ kind: 'text', delta: ', world' });
  await new Promise((r) => setTimeout(r, 3 * LOCAL_PROGRESS_GAP_MS));
  expect(seen[seen.length - 1]).toMatchObject({ text: { chars: 12, tail: 'Hello, world' } });
  expect(heartbeats).toHaveLength(0);
  unwatch();
  const before = seen.length;
  progress!({ kind: 'text', delta: '!' });
  await new Promise((r) => setTimeout(r, 3 * LOCAL_PROGRESS_GAP_MS));
  expect(seen).toHaveLength(before);
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
  r.flush();
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
      r.flush();
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
  r.flush();
  expect(r.beats).toEqual([{ 'model call': 'claude-test', elapsedSeconds: 8, phase: 'waiting' }]);
});

test('parseModelProgress accepts what modelProgress sends and refuses malformed details', () => {
  const r = reporter();
  r.progress({ kind: 'text', delta: 'abc' });
  r.flush();
  expect(parseModelProgress(r.beats[0])).toEqual({ text: { chars: 3, tail: 'abc' } });
  expect(parseModelProgress({ 'model call': 'm', elapsedSeconds: 1 })).toBeUndefined();
  expect(parseModelProgress({ text: { chars: 1, tail: 'abc' } })).toBeUndefined();
  expect(parseModelProgress({ text: { chars: '3', tail: 'abc' } })).toBeUndefined();
  expect(parseModelProgress('text')).toBeUndefined();
});
