import { ApplicationFailure } from '@temporalio/common';
import { MAX_CALL_USAGE_TOKENS, checkModelResponse } from '../../src/activities/response-check';
import {
  ErrorTypes,
  MAX_MODEL_VALUE_DEPTH,
  REFUSED_INPUT_KEY,
  nestsDeeperThan,
  previewInput,
  type ModelResponse,
} from '../../src/shared';

/**
 * What the model activity checks before a provider's answer reaches the workflow (no server:
 * `DA_SKIP_TEMPORAL=1 npx jest test/workflow/response-check.test.ts`).
 */
const usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const response = (content: unknown[], extra: Partial<ModelResponse> = {}): ModelResponse =>
  ({ id: 'm', model: 'claude-sonnet-5-5', content, stopReason: 'tool_use', usage, ...extra }) as ModelResponse;
const nested = (depth: number): unknown => {
  let value: unknown = 'x';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

test('nestsDeeperThan counts arrays and objects, exactly at the bound, without recursing', () => {
  expect(nestsDeeperThan('x', 0)).toBe(false);
  expect(nestsDeeperThan({}, 0)).toBe(true);
  expect(nestsDeeperThan(nested(64), 64)).toBe(false);
  expect(nestsDeeperThan(nested(65), 64)).toBe(true);
  expect(nestsDeeperThan({ a: [1, { b: nested(62) }] }, 64)).toBe(true);
  expect(nestsDeeperThan(nested(200_000), 64)).toBe(true);
});

test('previews name a value too deep to serialize instead of throwing', () => {
  expect(previewInput({ content: nested(200_000) }, 400)).toEqual({
    content: `(nested deeper than ${MAX_MODEL_VALUE_DEPTH} levels)`,
  });
});

test('a tool input deeper than the bound is replaced by a placeholder naming it; others stay as sent', () => {
  const ok = { type: 'tool_use', id: 'a', name: 'glob', input: { pattern: '*' } };
  const deep = { type: 'tool_use', id: 'b', name: 'write_file', input: { content: nested(100_000) } };
  const checked = checkModelResponse(response([ok, deep]));
  expect(checked.content[0]).toBe(ok);
  expect(checked.content[1]).toMatchObject({ id: 'b', name: 'write_file' });
  const placeholder = (checked.content[1] as { input: Record<string, string> }).input;
  expect(Object.keys(placeholder)).toEqual([REFUSED_INPUT_KEY]);
  expect(placeholder[REFUSED_INPUT_KEY]).toContain(`deeper than ${MAX_MODEL_VALUE_DEPTH} levels`);
});

test.each([Number.MAX_SAFE_INTEGER, MAX_CALL_USAGE_TOKENS + 1])(
  'usage of %i tokens in one call is a malformed response (run totals stay exact integers)',
  (tokens) => {
    let thrown: unknown;
    try {
      checkModelResponse(response([{ type: 'text', text: 'hi' }], { usage: { ...usage, outputTokens: tokens } }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({ type: ErrorTypes.MalformedResponse, nonRetryable: false });
    expect((thrown as Error).message).toContain(`usage.outputTokens is ${tokens}`);
  },
);

test(`usage of ${MAX_CALL_USAGE_TOKENS} tokens in one call passes`, () => {
  const ok = response([{ type: 'text', text: 'hi' }], { usage: { ...usage, inputTokens: MAX_CALL_USAGE_TOKENS } });
  expect(checkModelResponse(ok)).toBe(ok);
});
