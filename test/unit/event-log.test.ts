/**
 * The run's event log (src/workflows/run/events.ts) that the `events` query pages: a follower walking
 * the cursor sees every retained event once, in order; pages and carried events stay bounded.
 * Pure: no server.
 */
import fc from 'fast-check';
import {
  EVENT_TEXT_CHARS,
  EVENTS_CARRIED_OVER,
  MAX_CARRIED_EVENTS_BYTES,
  MAX_EVENTS_PAGE_BYTES,
  MAX_RETAINED_EVENTS,
  jsonBytes,
  type RunEvent,
} from '../../src/shared';
import { EVENTS_PER_PAGE, EventLog } from '../../src/workflows/run/events';

/** Every page from cursor 0 to the end. */
function walk(log: EventLog): RunEvent[] {
  const seen: RunEvent[] = [];
  let after = 0;
  for (;;) {
    const page = log.page({ after });
    if (page.events.length === 0) return seen;
    expect(page.events.length).toBeLessThanOrEqual(EVENTS_PER_PAGE);
    expect(page.events.length === 1 || jsonBytes(page.events) <= MAX_EVENTS_PAGE_BYTES + 2 * page.events.length).toBe(
      true,
    );
    seen.push(...page.events);
    after = page.cursor;
  }
}

test('walking the cursor returns every event exactly once, in order, whatever their sizes', () => {
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 6000 }), { minLength: 0, maxLength: 400 }), (sizes) => {
      const log = new EventLog(undefined, () => {});
      for (const size of sizes) log.emit({ kind: 'notice', message: 'x'.repeat(size) });
      const seen = walk(log);
      expect(seen.map((e) => e.seq)).toEqual(sizes.map((_, i) => i + 1));
      expect(log.lastSeq).toBe(sizes.length);
    }),
    { numRuns: 30 },
  );
});

test('the log keeps the newest MAX_RETAINED_EVENTS and says so to a follower who missed some', () => {
  const log = new EventLog(undefined, () => {});
  const total = MAX_RETAINED_EVENTS + 25;
  for (let i = 0; i < total; i++) log.emit({ kind: 'notice', message: `n${i}` });
  expect(log.page({ after: 0 }).truncated).toBe(true);
  expect(log.page({ after: 0 }).events[0]!.seq).toBe(total - MAX_RETAINED_EVENTS + 1);
  expect(log.page({ after: total - 10 }).truncated).toBe(false);
  expect(walk(log)).toHaveLength(MAX_RETAINED_EVENTS);
});

test('any query argument is a cursor or the start: a number, {after}, or junk', () => {
  const log = new EventLog(undefined, () => {});
  for (let i = 0; i < 5; i++) log.emit({ kind: 'notice', message: `n${i}` });
  for (const junk of [undefined, null, 'x', [], { after: 'two' }, { after: NaN }, { after: Infinity }]) {
    expect(log.page(junk).events).toHaveLength(5);
  }
  expect(log.page(3).events.map((e) => e.seq)).toEqual([4, 5]);
  expect(log.page({ after: 5 })).toEqual({ events: [], cursor: 5, truncated: false });
});

test('texts are cut when recorded, and an emitted event tells the listener', () => {
  let changes = 0;
  const log = new EventLog(undefined, () => changes++);
  log.emit({ kind: 'notice', message: 'm'.repeat(EVENT_TEXT_CHARS * 3) });
  log.emit({ kind: 'tool_call_finished', toolUseId: 't'.repeat(1000), name: 'bash', isError: false, preview: 'p' });
  const [notice, finished] = log.page({}).events as [
    Extract<RunEvent, { kind: 'notice' }>,
    Extract<RunEvent, { kind: 'tool_call_finished' }>,
  ];
  expect(notice.message.length).toBeLessThanOrEqual(EVENT_TEXT_CHARS);
  expect(finished.toolUseId.length).toBeLessThanOrEqual(200);
  expect(changes).toBe(2);
});

test('what is carried across continue-as-new is bounded in count and bytes, newest kept, sequence kept', () => {
  fc.assert(
    fc.property(fc.array(fc.nat({ max: 3000 }), { minLength: 1, maxLength: 300 }), (sizes) => {
      const log = new EventLog(undefined, () => {});
      for (const size of sizes) log.emit({ kind: 'notice', message: 'y'.repeat(size) });
      const carried = log.carried();
      expect(carried.eventSeq).toBe(sizes.length);
      expect(carried.events.length).toBeLessThanOrEqual(EVENTS_CARRIED_OVER);
      expect(jsonBytes(carried.events)).toBeLessThanOrEqual(MAX_CARRIED_EVENTS_BYTES + carried.events.length + 2);
      if (carried.events.length) expect(carried.events[carried.events.length - 1]!.seq).toBe(sizes.length);
      // The next execution goes on numbering after the carried events.
      const next = new EventLog(carried, () => {});
      next.emit({ kind: 'awaiting_input' });
      expect(next.lastSeq).toBe(sizes.length + 1);
    }),
    { numRuns: 30 },
  );
});

test("a model call's text and a tool's name are cut when recorded, short ones kept as sent", () => {
  const log = new EventLog(undefined, () => {});
  const long = 'w'.repeat(EVENT_TEXT_CHARS + 50);
  const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  const finished = (text: string) =>
    ({ kind: 'model_call_finished', iteration: 1, stopReason: 'end_turn', usage, costUsd: null, text }) as const;
  log.emit(finished(long));
  log.emit(finished('short'));
  log.emit({ kind: 'tool_call_started', toolUseId: 'id', name: 'n'.repeat(500), input: { path: 'p'.repeat(9000) } });
  log.emit({ kind: 'tool_call_started', toolUseId: 'id2', name: 'read_file', input: { path: 'a' } });
  const [cut, kept, longName, shortName] = log.page({}).events as [
    Extract<RunEvent, { kind: 'model_call_finished' }>,
    Extract<RunEvent, { kind: 'model_call_finished' }>,
    Extract<RunEvent, { kind: 'tool_call_started' }>,
    Extract<RunEvent, { kind: 'tool_call_started' }>,
  ];
  expect(cut.text.length).toBe(EVENT_TEXT_CHARS);
  expect(cut.text.endsWith('…')).toBe(true);
  expect(kept).toEqual({ ...finished('short'), seq: 2 });
  expect(longName.name.length).toBe(200);
  expect(jsonBytes(longName.input)).toBeLessThan(2000);
  expect(shortName).toMatchObject({ name: 'read_file', toolUseId: 'id2', input: { path: 'a' }, seq: 4 });
});

test('pages and carries stay bounded however queries and new events interleave', () => {
  // Sizes are measured when a page or a carry first needs them: a query between events must not
  // change what a later page or carry holds, and the log keeps its bounds across its limit.
  const op = fc.oneof(
    fc.record({ emit: fc.nat({ max: 5000 }) }),
    fc.record({ page: fc.nat({ max: MAX_RETAINED_EVENTS + 50 }) }),
    fc.constant({ carry: true }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), fc.nat({ max: MAX_RETAINED_EVENTS + 20 }), (ops, bulk) => {
      const queried = new EventLog(undefined, () => {});
      const quiet = new EventLog(undefined, () => {});
      const emitBoth = (size: number) => {
        // Turn texts are kept up to 4,000 characters: pages and carries reach their byte bounds.
        for (const log of [queried, quiet]) log.emit({ kind: 'text', iteration: 1, text: 'z'.repeat(size) });
      };
      for (let i = 0; i < bulk; i++) emitBoth((i * 997) % 4000);
      for (const o of ops) {
        if ('emit' in o) emitBoth(o.emit);
        else if ('page' in o) queried.page({ after: o.page });
        else queried.carried();
      }
      // The queried log answers exactly as one that was never queried.
      expect(walk(queried)).toEqual(walk(quiet));
      expect(queried.carried()).toEqual(quiet.carried());
      expect(jsonBytes(queried.carried().events)).toBeLessThanOrEqual(
        MAX_CARRIED_EVENTS_BYTES + queried.carried().events.length + 2,
      );
    }),
    { numRuns: 40 },
  );
});
