/**
 * What a provider's answer says about its key's rate limits: Anthropic's `anthropic-ratelimit-*`
 * headers, OpenAI's `x-ratelimit-*` headers, and `retry-after`. Headers come from outside and are
 * never trusted blindly: a value that is not a plain non-negative number, is absurdly large, or
 * contradicts its limit (remaining above limit) is dropped with a warning, and the rest of the
 * answer still counts.
 */

/** One limited quantity of a key, per minute as the providers state it. */
export type Dimension = 'requests' | 'inputTokens' | 'outputTokens' | 'tokens';

export const DIMENSIONS: readonly Dimension[] = ['requests', 'inputTokens', 'outputTokens', 'tokens'];

/** A limit and what remains of it, as one answer reported them. */
export interface LimitReading {
  limit: number;
  remaining: number;
}

/** Everything an answer said about the key, every field optional. */
export interface RateLimitReading {
  limits: Partial<Record<Dimension, LimitReading>>;
  /** The delay the answer asked for (`retry-after-ms` / `retry-after`), ms. */
  retryAfterMs?: number;
}

/**
 * Largest limit believed per minute. Real limits reach a few hundred million tokens; a header above
 * this is broken or hostile, and trusting it would turn admission off.
 */
export const MAX_HEADER_LIMIT = 1e10;
/** Longest `retry-after` believed, ms: real rate-limit delays are seconds to minutes. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/** `Headers`, or a plain record (case-insensitive lookup). */
export type HeaderBag = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/** Header names per provider family and dimension. */
const ANTHROPIC: Partial<Record<Dimension, string>> = {
  requests: 'anthropic-ratelimit-requests',
  inputTokens: 'anthropic-ratelimit-input-tokens',
  outputTokens: 'anthropic-ratelimit-output-tokens',
  tokens: 'anthropic-ratelimit-tokens',
};

/** OpenAI puts the dimension last: `x-ratelimit-limit-requests`, `x-ratelimit-remaining-tokens`. */
const OPENAI: Partial<Record<Dimension, string>> = { requests: 'requests', tokens: 'tokens' };

/**
 * Reads the rate-limit headers of one answer (any status). `warn` hears of every value dropped.
 * Anthropic's `tokens` pair (the most restrictive of the token limits) is skipped when the input and
 * output pairs are there, so one quantity is not limited twice.
 */
export function readRateLimitHeaders(headers: HeaderBag | null | undefined, warn: (m: string) => void = () => {}) {
  const reading: RateLimitReading = { limits: {} };
  if (!headers) return reading;
  for (const dim of DIMENSIONS) {
    const anthropic = ANTHROPIC[dim];
    const openai = OPENAI[dim];
    const pair =
      (anthropic && readPair(headers, `${anthropic}-limit`, `${anthropic}-remaining`, warn)) ||
      (openai && readPair(headers, `x-ratelimit-limit-${openai}`, `x-ratelimit-remaining-${openai}`, warn)) ||
      undefined;
    if (pair) reading.limits[dim] = pair;
  }
  if (reading.limits.tokens && headerOf(headers, 'anthropic-ratelimit-tokens-limit') !== undefined) {
    if (reading.limits.inputTokens || reading.limits.outputTokens) delete reading.limits.tokens;
  }
  const retryAfterMs = readRetryAfter(headers, warn);
  if (retryAfterMs !== undefined) reading.retryAfterMs = retryAfterMs;
  return reading;
}

function readPair(
  headers: HeaderBag,
  limitName: string,
  remainingName: string,
  warn: (m: string) => void,
): LimitReading | undefined {
  const limitText = headerOf(headers, limitName);
  const remainingText = headerOf(headers, remainingName);
  if (limitText === undefined && remainingText === undefined) return undefined;
  const limit = count(limitName, limitText, warn);
  const remaining = count(remainingName, remainingText, warn);
  if (limit === undefined || remaining === undefined) return undefined;
  if (limit === 0) {
    warn(`ignoring rate-limit header ${limitName}: 0 (a limit of zero would stop every call)`);
    return undefined;
  }
  if (remaining > limit) {
    warn(`ignoring rate-limit headers ${remainingName}: ${remaining} is above ${limitName}: ${limit}`);
    return undefined;
  }
  return { limit, remaining };
}

function count(name: string, text: string | undefined, warn: (m: string) => void): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!/^\d{1,16}$/.test(trimmed)) {
    warn(`ignoring rate-limit header ${name}: ${JSON.stringify(text.slice(0, 40))} is not a whole number`);
    return undefined;
  }
  const value = Number(trimmed);
  if (value > MAX_HEADER_LIMIT) {
    warn(`ignoring rate-limit header ${name}: ${trimmed} is above ${MAX_HEADER_LIMIT}`);
    return undefined;
  }
  return value;
}

/**
 * `retry-after-ms` (ms), else `retry-after` (seconds; an HTTP date is read as a duration from now, the
 * one place a clock enters). Negative, non-numeric or absurd values are dropped with a warning.
 */
export function readRetryAfter(
  headers: HeaderBag,
  warn: (m: string) => void = () => {},
  now = Date.now(),
): number | undefined {
  const ms = headerOf(headers, 'retry-after-ms');
  if (ms !== undefined) {
    const value = Number(ms.trim());
    if (Number.isFinite(value) && value >= 0 && value <= MAX_RETRY_AFTER_MS && ms.trim() !== '')
      return Math.ceil(value);
    warn(`ignoring retry-after-ms: ${JSON.stringify(ms.slice(0, 40))} (accepted: 0 to ${MAX_RETRY_AFTER_MS} ms)`);
  }
  const after = headerOf(headers, 'retry-after');
  if (after === undefined) return undefined;
  const text = after.trim();
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : Number.NaN;
  const value = Number.isFinite(seconds) ? seconds : /[a-z]/i.test(text) ? Date.parse(text) - now : Number.NaN;
  if (Number.isFinite(value) && value >= 0 && value <= MAX_RETRY_AFTER_MS) return Math.ceil(value);
  warn(`ignoring retry-after: ${JSON.stringify(after.slice(0, 40))} (accepted: 0 to ${MAX_RETRY_AFTER_MS / 1000} s)`);
  return undefined;
}

function headerOf(headers: HeaderBag, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}
