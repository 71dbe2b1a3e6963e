import { ApplicationFailure } from '@temporalio/common';
import { ErrorTypes } from '../shared/constants';

/**
 * A run's cost, and so `maxBudgetUsd`, rests on the token counts the provider reports. A count that
 * is missing, negative, fractional, not a number or absurdly large is therefore a provider error
 * (`ModelError.MalformedResponse`, retryable: Temporal repeats the call within the model retry
 * policy's bounded attempts, and the run ends `failed` if it never reports usage), never a zero
 * that would let a run spend without limit. Zero itself is a count the API may report.
 */

/** More tokens than any model reads or writes in one call: a count above it is not believed. */
export const MAX_CALL_TOKENS = 100_000_000;

/** A token count as reported: a whole number from 0 to MAX_CALL_TOKENS, else a retryable provider error. */
export function tokenCount(value: unknown, field: string, provider: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_CALL_TOKENS) return value;
  const shown = value === undefined ? 'missing' : (JSON.stringify(value) ?? String(value)).slice(0, 40);
  throw invalidUsage(provider, `${field} is ${shown}`);
}

/** An optional count (a cache counter): absent or `null` is 0; anything else must be a valid count. */
export function optionalTokenCount(value: unknown, field: string, provider: string): number {
  return value === undefined || value === null ? 0 : tokenCount(value, field, provider);
}

/** The failure for an answer without a usable usage report. */
export function invalidUsage(provider: string, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.MalformedResponse,
    message:
      `${provider} reported no valid token usage (${what}; expected a whole number from 0 to ` +
      `${MAX_CALL_TOKENS}): the run's cost and budget depend on it, so the call is retried`,
    nonRetryable: false,
  });
}
