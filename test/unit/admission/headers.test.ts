import { readRateLimitHeaders, readRetryAfter } from '../../../src/admission/headers';
import { Admission } from '../../../src/admission/admission';
import { parseRateLimits } from '../../../src/admission/settings';

describe('rate-limit headers', () => {
  test("Anthropic's headers: requests, input and output tokens, retry-after", () => {
    const headers = new Headers({
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': '2026-11-28T23:00:01Z',
      'anthropic-ratelimit-input-tokens-limit': '30000',
      'anthropic-ratelimit-input-tokens-remaining': '29000',
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': '8000',
      'anthropic-ratelimit-tokens-limit': '38000',
      'anthropic-ratelimit-tokens-remaining': '37000',
      'retry-after': '3',
    });
    expect(readRateLimitHeaders(headers)).toEqual({
      limits: {
        requests: { limit: 50, remaining: 49 },
        inputTokens: { limit: 30000, remaining: 29000 },
        outputTokens: { limit: 8000, remaining: 8000 },
      },
      retryAfterMs: 3000,
    });
  });

  test("OpenAI's x-ratelimit headers", () => {
    const headers = {
      'x-ratelimit-limit-requests': '500',
      'x-ratelimit-remaining-requests': '499',
      'x-ratelimit-reset-requests': '120ms',
      'x-ratelimit-limit-tokens': '200000',
      'x-ratelimit-remaining-tokens': '150000',
    };
    expect(readRateLimitHeaders(headers)).toEqual({
      limits: { requests: { limit: 500, remaining: 499 }, tokens: { limit: 200000, remaining: 150000 } },
    });
  });

  test.each([
    ['negative', '-5'],
    ['non-numeric', 'lots'],
    ['huge', '99999999999999999999'],
    ['above the limit', '40000'],
    ['fractional', '12.5'],
    ['empty', ''],
  ])('a %s value is ignored with a warning, and the other headers still count', (_what, remaining) => {
    const warnings: string[] = [];
    const headers = new Headers({
      'anthropic-ratelimit-input-tokens-limit': '30000',
      'anthropic-ratelimit-input-tokens-remaining': remaining,
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '10',
    });
    const reading = readRateLimitHeaders(headers, (m) => warnings.push(m));
    expect(reading.limits.inputTokens).toBeUndefined();
    expect(reading.limits.requests).toEqual({ limit: 50, remaining: 10 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ignoring rate-limit header/);
  });

  test('a limit of zero or a huge limit is not trusted', () => {
    const warnings: string[] = [];
    expect(
      readRateLimitHeaders(
        { 'anthropic-ratelimit-requests-limit': '0', 'anthropic-ratelimit-requests-remaining': '0' },
        (m) => warnings.push(m),
      ).limits,
    ).toEqual({});
    expect(
      readRateLimitHeaders(
        { 'anthropic-ratelimit-requests-limit': '1e30', 'anthropic-ratelimit-requests-remaining': '5' },
        (m) => warnings.push(m),
      ).limits,
    ).toEqual({});
    expect(warnings).toHaveLength(2);
  });

  test.each(['-1', 'soon', '999999999', 'NaN'])('retry-after %j is ignored with a warning', (value) => {
    const warnings: string[] = [];
    expect(readRetryAfter({ 'retry-after': value }, (m) => warnings.push(m))).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  test('warnings about one broken header are not repeated within a minute', () => {
    const warnings: string[] = [];
    let now = 0;
    const admission = new Admission({ warn: (m) => warnings.push(m), now: () => now });
    for (let i = 0; i < 5; i++) {
      const d = admission.decide('k', 'anthropic', {
        id: `c${i}`,
        priority: 3,
        fairnessKey: 'f',
        demand: { requests: 1 },
      });
      if (d.admitted)
        admission.observe(
          'k',
          'anthropic',
          { 'anthropic-ratelimit-requests-limit': 'x', 'anthropic-ratelimit-requests-remaining': '1' },
          200,
          d.ticket,
        );
      now += 1000;
    }
    expect(warnings).toHaveLength(1);
  });
});

describe('DURABLE_AGENT_RATE_LIMITS', () => {
  test('reads per-provider limits', () => {
    expect(parseRateLimits('{"anthropic": {"requestsPerMinute": 50, "inputTokensPerMinute": 30000}}')).toEqual({
      anthropic: { requestsPerMinute: 50, inputTokensPerMinute: 30000 },
    });
    expect(parseRateLimits(undefined)).toEqual({});
  });

  test.each([
    ['not json', /must be JSON/],
    ['{"gemini": {"requestsPerMinute": 5}}', /provider must be one of: anthropic, openai/],
    ['{"anthropic": {"requestsPerMinute": -5}}', /requestsPerMinute must be at least 1/],
    ['{"anthropic": {"requestsPerMinute": 1.5}}', /whole number/],
    ['{"anthropic": {"rpm": 5}}', /rpm/],
  ])('%s is refused with a message', (text, message) => {
    expect(() => parseRateLimits(text)).toThrow(message);
  });
});
