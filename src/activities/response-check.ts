import { ApplicationFailure } from '@temporalio/common';
import {
  MAX_MODEL_VALUE_DEPTH,
  REFUSED_INPUT_KEY,
  nestsDeeperThan,
  tooDeepInputError,
  utf8Length,
} from '../shared/bounds';
import { ErrorTypes, MAX_MODEL_RESPONSE_BYTES } from '../shared/constants';
import type { ModelResponse } from '../shared/messages';

const USAGE_FIELDS = ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens'] as const;

/**
 * Most tokens one call may report in a usage field: far above any model's context window, and low
 * enough that a run's totals stay exact integers (below Number.MAX_SAFE_INTEGER) over any number of
 * calls a run can make. A provider reporting more is answering nonsense.
 */
export const MAX_CALL_USAGE_TOKENS = 1_000_000_000;

/**
 * A provider's answer is data from outside: before the run records it, its shape and numbers are
 * checked. Usage must be non-negative whole numbers (else cost and `maxBudgetUsd` would silently
 * stop working): anything else is a malformed response, retried a bounded number of times. An
 * answer larger than a run can record fails once, non-retryably, saying so (asking again would get
 * the same answer, and recording it would exceed Temporal's payload limit). A tool call whose input
 * nests deeper than MAX_MODEL_VALUE_DEPTH keeps its place with a placeholder input naming the
 * bound (the workflow answers it with an `is_error` result): such a value overflows the stack of
 * whatever walks it, from the payload converter to the run's event previews.
 */
export function checkModelResponse(response: ModelResponse): ModelResponse {
  const problems: string[] = [];
  if (!Array.isArray(response.content)) problems.push('content is not an array of blocks');
  else if (
    response.content.some(
      (b) => typeof b !== 'object' || b === null || typeof (b as { type?: unknown }).type !== 'string',
    )
  ) {
    problems.push('a content block has no string type');
  } else {
    for (const block of response.content as unknown as Array<Record<string, unknown>>) {
      if (block.type === 'tool_use' && (typeof block.id !== 'string' || typeof block.name !== 'string')) {
        problems.push('a tool_use block lacks a string id or name');
        break;
      }
      if (block.type === 'text' && typeof block.text !== 'string') {
        problems.push('a text block has no string text');
        break;
      }
    }
  }
  if (response.stopReason !== null && typeof response.stopReason !== 'string')
    problems.push('stop_reason is not a string');
  const usage = response.usage as unknown as Record<string, unknown> | undefined;
  if (typeof usage !== 'object' || usage === null) problems.push('usage is missing');
  else {
    for (const field of USAGE_FIELDS) {
      const value = usage[field];
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
        problems.push(`usage.${field} is ${JSON.stringify(value) ?? 'undefined'}, not a non-negative whole number`);
      } else if (value > MAX_CALL_USAGE_TOKENS) {
        problems.push(`usage.${field} is ${value}, more than any call can use (at most ${MAX_CALL_USAGE_TOKENS})`);
      }
    }
  }
  if (problems.length) {
    throw ApplicationFailure.retryable(
      `malformed model response: ${problems.join('; ')}`,
      ErrorTypes.MalformedResponse,
    );
  }
  response = withBoundedToolInputs(response);
  // At most 3 UTF-8 bytes per UTF-16 unit: an answer that short is within the bound without counting.
  const json = JSON.stringify(response);
  const bytes = json.length * 3 <= MAX_MODEL_RESPONSE_BYTES ? 0 : utf8Length(json);
  if (bytes > MAX_MODEL_RESPONSE_BYTES) {
    throw ApplicationFailure.nonRetryable(
      `the model's answer is ${bytes} bytes, more than the ${MAX_MODEL_RESPONSE_BYTES} bytes a run can record; ` +
        'lower maxTokens or ask for shorter answers',
      ErrorTypes.ResponseTooLarge,
    );
  }
  return response;
}

/** The response with every overdeep tool input replaced by the placeholder that names the bound. */
function withBoundedToolInputs(response: ModelResponse): ModelResponse {
  const blocks = response.content as unknown as Array<Record<string, unknown>>;
  if (!blocks.some((b) => 'input' in b && nestsDeeperThan(b.input, MAX_MODEL_VALUE_DEPTH))) return response;
  const content = blocks.map((b) =>
    'input' in b && nestsDeeperThan(b.input, MAX_MODEL_VALUE_DEPTH)
      ? { ...b, input: { [REFUSED_INPUT_KEY]: tooDeepInputError(MAX_MODEL_VALUE_DEPTH) } }
      : b,
  );
  return { ...response, content: content as unknown as ModelResponse['content'] };
}
