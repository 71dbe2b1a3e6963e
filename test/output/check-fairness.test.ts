/**
 * Finding F4 (issue 44): answer checks shared a worker's two validator threads first come, first
 * served, and the time a check waited for a thread counted only against the local activity's
 * timeout. A run whose answers cost a whole deadline each could keep another run's trivial check
 * waiting until it failed. These tests check the pool itself: the first-error pass, the bounded
 * second pass, the fair order, the "busy" answer and the per-run budget.
 */
import { OutputCheckPool, ValidatorBusyError } from '../../src/activities/output-check-pool';
import { checkOutputFirst } from '../../src/activities/output-validator';
import { outputSchemaBoundsProblem, type CheckOutputInput } from '../../src/shared/output-schema';
import { taggedTreeAnswer, taggedTreeSchema } from './fair-schemas';

jest.setTimeout(60_000);

const trivial: CheckOutputInput = { schema: { type: 'string' }, text: '"ok"' };
/** Exponential even when stopping at the first error: every check of it runs into the deadline. */
const hostile: CheckOutputInput = { schema: taggedTreeSchema(true), text: taggedTreeAnswer(14) };

test('the review schema passes the run-input bounds and its deep bad answer is decided by the first-error pass', async () => {
  expect(JSON.stringify(taggedTreeSchema()).length).toBeLessThan(450);
  expect(outputSchemaBoundsProblem(taggedTreeSchema())).toBeUndefined();
  // The first pass leaves a `oneOf` branch at its `kind` tag: linear in the depth.
  const first = checkOutputFirst({ schema: taggedTreeSchema(), text: taggedTreeAnswer(14) });
  expect(first.output).toMatchObject({ kind: 'invalid' });
  expect(first.detail).toBeDefined();
  // In a thread, the second pass (every branch to its leaves: exponential) is cut short and the
  // first pass's violations stand; it used to end as "could not be checked", or a dead thread.
  const pool = new OutputCheckPool({ deadlineMs: 8_000, detailMs: 300 });
  try {
    const checked = await pool.check({ schema: taggedTreeSchema(), text: taggedTreeAnswer(14) }, undefined, 'run-a');
    expect(checked.kind).toBe('invalid');
    const violations = (checked as { violations: string[] }).violations;
    expect(violations.join('\n')).not.toMatch(/could not be checked/);
    expect(violations.join('\n')).toMatch(/\/children\/0\/children\/0.* must (be object|match exactly one schema)/);
    expect(pool.usedMs('run-a')).toBeLessThan(8_000);
    // A valid tree passes; a shallow bad one gets the full list from the second pass.
    const valid = JSON.stringify({ kind: 'b', children: [{ kind: 'c', children: [] }] });
    expect(await pool.check({ schema: taggedTreeSchema(), text: valid })).toEqual({ kind: 'valid', json: valid });
    const shallow = await pool.check({ schema: taggedTreeSchema(), text: '{"kind": "d", "children": []}' });
    expect((shallow as { violations: string[] }).violations.length).toBeGreaterThan(1);
  } finally {
    await pool.close();
  }
});

test('a free thread goes to the run that used the least validator time, one check per run at a time', async () => {
  // A deadline of seconds: the thread stopped at a deadline is started again, cold, for the next check.
  const pool = new OutputCheckPool({ maxThreads: 1, deadlineMs: 4_000, queueMs: 60_000 });
  const order: string[] = [];
  const track = (name: string, run: string, input: CheckOutputInput) =>
    pool.check(input, undefined, run).then((output) => {
      order.push(name);
      return output;
    });
  try {
    // The hostile run's first check takes the thread; its second waits behind it (one per run),
    // then behind the runs that have used nothing yet. First come, first served put it second.
    const checks = [
      track('hostile-1', 'hostile', hostile),
      track('hostile-2', 'hostile', hostile),
      track('other', 'other', hostile),
      track('victim', 'victim', trivial),
    ];
    const outputs = await Promise.all(checks);
    expect(order).toEqual(['hostile-1', 'other', 'victim', 'hostile-2']);
    expect(outputs[3]).toEqual({ kind: 'valid', json: '"ok"' });
    // Stopped at one of its limits: the deadline or, with seconds to run, the thread's heap.
    expect(outputs[0]).toMatchObject({
      kind: 'invalid',
      violations: [expect.stringMatching(/took longer|ran out of memory/)],
    });
    expect(pool.usedMs('hostile')).toBeGreaterThanOrEqual(1_000);
  } finally {
    await pool.close();
  }
});

test('a check that cannot get a thread within the queue budget is busy; a run over its budget is not checked again', async () => {
  // Deadlines of seconds: a cold thread (loading ajv) on a loaded machine takes a good part of a second.
  const pool = new OutputCheckPool({ maxThreads: 1, deadlineMs: 4_000, queueMs: 200, runBudgetMs: 500 });
  try {
    const running = pool.check(hostile, undefined, 'hostile');
    await expect(pool.check(trivial, undefined, 'victim')).rejects.toBeInstanceOf(ValidatorBusyError);
    await expect(pool.check(trivial, undefined, 'victim')).rejects.toThrow(/validator is busy/);
    expect(await running).toMatchObject({ kind: 'invalid' });
    // Once the thread is free, the victim is checked.
    expect(await pool.check(trivial, undefined, 'victim')).toEqual({ kind: 'valid', json: '"ok"' });
    // The hostile run used more than its 0.5 s: its next answer (even a trivial one) is refused unchecked, at once.
    const refused = await pool.check(trivial, undefined, 'hostile');
    expect(refused).toEqual({
      kind: 'invalid',
      violations: [expect.stringMatching(/could not be checked within the run's budget/)],
    });
    expect(await pool.check({ schema: { type: 'string' } }, undefined, 'hostile')).toMatchObject({
      kind: 'bad_schema',
    });
  } finally {
    await pool.close();
  }
});
