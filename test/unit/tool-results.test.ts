/**
 * One turn's tool results (src/workflows/steps/tool-results.ts): they are cut to fit the next model
 * call's payload, the small ones kept whole; the `done` call's summary decides its result. Pure: no server.
 */
import fc from 'fast-check';
import { toolResultBlock, utf8Length, type ToolResultBlock } from '../../src/shared';
import { doneResult, fitToBudget, summaryOf } from '../../src/workflows/steps/tool-results';

const results = fc
  .array(fc.tuple(fc.string({ maxLength: 3000, size: 'max' }), fc.boolean()), { minLength: 1, maxLength: 10 })
  .map((rs) => rs.map(([content, isError], i) => toolResultBlock(`call-${i}`, content, isError)));
const bytes = (rs: ToolResultBlock[]) => rs.reduce((sum, r) => sum + utf8Length(r.content), 0);

test('results that fit the budget are returned unchanged', () => {
  fc.assert(
    fc.property(results, (rs) => {
      expect(fitToBudget(rs, bytes(rs))).toBe(rs);
    }),
  );
});

test('results over the budget are cut to fit it, in order, ids and error flags kept, small ones whole', () => {
  fc.assert(
    fc.property(results, fc.double({ min: 0.2, max: 0.95, noNaN: true }), (rs, share) => {
      const budget = Math.floor(bytes(rs) * share);
      // A cut result keeps a note of about 100 bytes: budgets too small for one per result are not meaningful.
      fc.pre(budget >= 200 * rs.length);
      const fitted = fitToBudget(rs, budget);
      expect(bytes(fitted)).toBeLessThanOrEqual(budget);
      expect(fitted.map((r) => [r.tool_use_id, r.is_error])).toEqual(rs.map((r) => [r.tool_use_id, r.is_error]));
      // Whatever stays whole is no larger than any result that was cut.
      const cut = rs.filter((r, i) => fitted[i]!.content !== r.content);
      const whole = rs.filter((r, i) => fitted[i]!.content === r.content);
      expect(cut.length).toBeGreaterThan(0);
      const smallestCut = Math.min(...cut.map((r) => utf8Length(r.content)));
      for (const r of whole) expect(utf8Length(r.content)).toBeLessThanOrEqual(smallestCut);
      for (const [i, r] of fitted.entries()) {
        if (r.content !== rs[i]!.content) expect(r.content).toContain("[output cut to fit the run's history");
      }
    }),
  );
});

test('done needs a non-empty summary string; anything else is answered with an error', () => {
  const call = (input: unknown) => ({ type: 'tool_use' as const, id: 'd1', name: 'done', input });
  expect(summaryOf(call({ summary: 'all done' }))).toBe('all done');
  for (const input of [{}, { summary: '   ' }, { summary: 42 }, null, 'summary', undefined]) {
    const summary = summaryOf(call(input));
    expect(summary).toBeUndefined();
    expect(doneResult(call(input), summary)).toMatchObject({ tool_use_id: 'd1', is_error: true });
  }
  expect(summaryOf(undefined)).toBeUndefined();
  const recorded = doneResult(call({ summary: 'x' }), 'x');
  expect(recorded.tool_use_id).toBe('d1');
  expect(recorded.is_error).toBeUndefined();
});
