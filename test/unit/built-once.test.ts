/**
 * `builtOnce` keeps one value per key: the run input's schemas are built by the first run on a
 * workflow thread and shared by the rest (src/shared/built-once.ts).
 */
import { builtOnce, onFirstUse } from '../../src/shared/built-once';
import { agentRunInputSchema, parseRunInput } from '../../src/shared/run/input';

test('a key is built once and the same value is returned after', () => {
  let builds = 0;
  const first = builtOnce('test:once', () => ({ built: ++builds }));
  const again = builtOnce('test:once', () => ({ built: ++builds }));
  expect(again).toBe(first);
  expect(builds).toBe(1);
  expect(builtOnce('test:other', () => 'other')).toBe('other');
});

test('the shared run input schema parses after a failed parse as before it', () => {
  const schema = agentRunInputSchema();
  expect(agentRunInputSchema()).toBe(schema);
  expect(builtOnce('run-input', () => 'not this')).toBe(schema);
  expect(parseRunInput({ prompt: '' })).toMatchObject({ ok: false });
  expect(parseRunInput({ prompt: 'hi', maxIteration: 3 })).toMatchObject({ ok: false });
  expect(parseRunInput({ prompt: 'hi', maxIterations: 3 })).toMatchObject({ ok: true, input: { maxIterations: 3 } });
});

test('onFirstUse builds on the first call, not when it is defined', () => {
  let builds = 0;
  const get = onFirstUse('test:lazy', () => ({ built: ++builds }));
  expect(builds).toBe(0);
  expect(get()).toBe(get());
  expect(builds).toBe(1);
});
