/**
 * `run --priority N` and `--fairness-key K` (docs/models.md, "Rate limits"): values outside 1–5, or not
 * whole numbers, are refused before anything starts, exit 2, with a message saying what is accepted.
 */
import { describeFailure, main } from '../../src/cli/main';
import { runInputFromFlags } from '../../src/cli/run-flags';

async function attempt(argv: string[]): Promise<{ code: number; text: string }> {
  let text = '';
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  try {
    return { code: await main(argv), text };
  } catch (error) {
    const failure = describeFailure(error);
    return { code: failure.code, text: failure.text };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

test.each([
  ['0', 'priority must be at least 1 (1 goes first)'],
  ['6', 'priority must be at most 5 (5 goes last)'],
  ['x', "--priority must be a whole number, got 'x'"],
  ['2.5', "--priority must be a whole number, got '2.5'"],
])('--priority %s is refused: exit 2, %s', async (value, message) => {
  const { code, text } = await attempt(['run', 'hello', '--priority', value, '--model', 'offline-demo']);
  expect(code).toBe(2);
  expect(text).toContain(message);
});

test('a fairness key over 64 bytes is refused naming the limit', async () => {
  const { code, text } = await attempt(['run', 'hello', '--fairness-key', 'é'.repeat(40), '--model', 'offline-demo']);
  expect(code).toBe(2);
  expect(text).toContain('fairnessKey must be at most 64 bytes');
});

test('--priority and --fairness-key set the run input; a session defaults to 2', async () => {
  expect(await runInputFromFlags({ priority: 1, 'fairness-key': 'tenant-a' })).toEqual({
    priority: 1,
    fairnessKey: 'tenant-a',
  });
  expect(await runInputFromFlags({ session: true })).toEqual({ session: true, priority: 2 });
});
