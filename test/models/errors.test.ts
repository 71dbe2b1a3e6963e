import Anthropic, { AnthropicError, APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { AnthropicProvider } from '../../src/models/anthropic';
import { classifyModelError, retryDelayFromHeaders, type ModelErrorDetails } from '../../src/models/errors';
import type { ModelRequest } from '../../src/shared';
import { ErrorTypes } from '../../src/shared';
import { apiError, startFakeAnthropic, type FakeAnthropic, type FakeBehaviour } from '../support/fake-anthropic';

const REQUEST: ModelRequest = {
  model: 'claude-sonnet-5-5',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxTokens: 256,
};

let fake: FakeAnthropic;
let provider: AnthropicProvider;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  // The SDK logs malformed chunks with console.error; these tests provoke them on purpose.
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0, logLevel: 'off' });
  provider = new AnthropicProvider({ client });
});

afterAll(async () => {
  await fake.close();
});

/** Runs one real SDK call against the fake answering with `behaviour` and returns what the provider threw. */
async function failureFor(behaviour: FakeBehaviour): Promise<ApplicationFailure> {
  fake.enqueue(behaviour);
  const error = await provider.call(REQUEST, { signal: new AbortController().signal, heartbeat: () => undefined }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(fake.pending()).toBe(0);
  if (!(error instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

function detailsOf(failure: ApplicationFailure): ModelErrorDetails {
  return failure.details?.[0] as ModelErrorDetails;
}

describe('retryable HTTP errors', () => {
  test('429 with retry-after (seconds) is retryable with nextRetryDelay from the header', async () => {
    const failure = await failureFor(
      apiError(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit', {
        headers: { 'retry-after': '17' },
        requestId: 'req_429',
      }),
    );
    expect(failure).toMatchObject({ type: ErrorTypes.RateLimited, nonRetryable: false, nextRetryDelay: 17_000 });
    expect(failure.message).toBe(
      'Anthropic API 429 rate_limit_error: Number of requests has exceeded your rate limit (request req_429)',
    );
    expect(detailsOf(failure)).toEqual({
      status: 429,
      apiErrorType: 'rate_limit_error',
      errorCode: null,
      requestId: 'req_429',
      retryAfterMs: 17_000,
    });
  });

  test('retry-after-ms wins over retry-after', async () => {
    const failure = await failureFor(
      apiError(429, 'rate_limit_error', 'slow down', { headers: { 'retry-after-ms': '1500', 'retry-after': '30' } }),
    );
    expect(failure).toMatchObject({ type: ErrorTypes.RateLimited, nonRetryable: false, nextRetryDelay: 1500 });
  });

  test('429 without a retry header leaves the delay to the retry policy', async () => {
    const failure = await failureFor(apiError(429, 'rate_limit_error', 'slow down'));
    expect(failure).toMatchObject({ type: ErrorTypes.RateLimited, nonRetryable: false });
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  test('429 ramp_limit_exceeded is a rate limit, not a spend limit', async () => {
    const failure = await failureFor(
      apiError(429, 'rate_limit_error', 'usage is growing too fast', {
        errorCode: 'ramp_limit_exceeded',
        headers: { 'retry-after': '5' },
      }),
    );
    expect(failure).toMatchObject({ type: ErrorTypes.RateLimited, nonRetryable: false, nextRetryDelay: 5000 });
  });

  test('529 overloaded is retryable Overloaded', async () => {
    const failure = await failureFor(apiError(529, 'overloaded_error', 'Overloaded'));
    expect(failure).toMatchObject({ type: ErrorTypes.Overloaded, nonRetryable: false });
    expect(failure.message).toMatch(/^Anthropic API 529 overloaded_error: Overloaded \(request req_fake_\d+\)$/);
  });

  test.each([500, 502, 503, 504])('%i is a retryable server error', async (status) => {
    const failure = await failureFor(apiError(status, 'api_error', 'Internal server error'));
    expect(failure).toMatchObject({ type: ErrorTypes.ServerError, nonRetryable: false });
    expect(detailsOf(failure).status).toBe(status);
  });

  test('408 is a retryable timeout', async () => {
    const failure = await failureFor(apiError(408, 'timeout_error', 'Request timed out'));
    expect(failure).toMatchObject({ type: ErrorTypes.Timeout, nonRetryable: false });
  });

  test('409 is retryable', async () => {
    const failure = await failureFor(apiError(409, 'conflict_error', 'Conflict'));
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('409 conflict_error');
  });

  test('x-should-retry: false makes a 503 non-retryable', async () => {
    const failure = await failureFor(
      apiError(503, 'api_error', 'unavailable', { headers: { 'x-should-retry': 'false' } }),
    );
    expect(failure).toMatchObject({ type: ErrorTypes.ServerError, nonRetryable: true });
  });

  test('x-should-retry: true makes a 400 retryable', async () => {
    const failure = await failureFor(
      apiError(400, 'invalid_request_error', 'try again', { headers: { 'x-should-retry': 'true' } }),
    );
    expect(failure).toMatchObject({ type: ErrorTypes.BadRequest, nonRetryable: false });
  });
});

describe('non-retryable HTTP errors', () => {
  test.each([
    [400, 'invalid_request_error', 'temperature: Extra inputs are not permitted', ErrorTypes.BadRequest],
    [401, 'authentication_error', 'invalid x-api-key', ErrorTypes.Authentication],
    [402, 'billing_error', 'Your credit balance is too low', ErrorTypes.BillingLimit],
    [403, 'permission_error', 'Your API key does not have permission', ErrorTypes.PermissionDenied],
    [404, 'not_found_error', 'model: claude-nope', ErrorTypes.NotFound],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes', ErrorTypes.RequestTooLarge],
    [422, 'invalid_request_error', 'Unprocessable entity', ErrorTypes.Unprocessable],
  ])('%i %s → %s, non-retryable, message names the cause', async (status, type, text, expectedType) => {
    const failure = await failureFor(apiError(status, type, text, { requestId: 'req_123' }));
    expect(failure).toMatchObject({ type: expectedType, nonRetryable: true });
    expect(failure.message).toBe(`Anthropic API ${status} ${type}: ${text} (request req_123)`);
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  test.each(['enforced_spend_limit_reached', 'contract_spend_limit_reached'])(
    'a 429 with error code %s is a non-retryable billing limit, even with retry-after',
    async (errorCode) => {
      const failure = await failureFor(
        apiError(429, 'rate_limit_error', 'You have reached your spend limit', {
          errorCode,
          headers: { 'retry-after': '60' },
          requestId: 'req_spend',
        }),
      );
      expect(failure).toMatchObject({ type: ErrorTypes.BillingLimit, nonRetryable: true });
      expect(failure.message).toBe(
        `Anthropic API 429 rate_limit_error (${errorCode}): You have reached your spend limit (request req_spend)`,
      );
      expect(detailsOf(failure).errorCode).toBe(errorCode);
    },
  );

  test('a 429 without an error code whose message names a usage limit is a billing limit', async () => {
    const failure = await failureFor(
      apiError(
        429,
        'rate_limit_error',
        'You have reached your specified API usage limits. You will regain access on 2026-12-01.',
      ),
    );
    expect(failure).toMatchObject({ type: ErrorTypes.BillingLimit, nonRetryable: true });
  });

  test('a 429 with billing_error type is a billing limit', async () => {
    const failure = await failureFor(apiError(429, 'billing_error', 'Billing problem'));
    expect(failure).toMatchObject({ type: ErrorTypes.BillingLimit, nonRetryable: true });
  });
});

describe('transport and stream failures', () => {
  test('a connection reset before the response is a retryable connection error', async () => {
    const failure = await failureFor({ kind: 'reset' });
    expect(failure).toMatchObject({ type: ErrorTypes.Connection, nonRetryable: false });
    expect(failure.message).toMatch(/^Anthropic API connection error: Connection error\./);
  });

  test('a connection reset mid-stream is a retryable connection error', async () => {
    const failure = await failureFor({ kind: 'reset', afterEvents: 2 });
    expect(failure).toMatchObject({ type: ErrorTypes.Connection, nonRetryable: false });
  });

  test('an SSE event with invalid JSON is a retryable malformed response', async () => {
    const failure = await failureFor({ kind: 'malformed' });
    expect(failure).toMatchObject({ type: ErrorTypes.MalformedResponse, nonRetryable: false });
  });

  test('a non-SSE body for a stream request is a retryable malformed response', async () => {
    const failure = await failureFor({
      kind: 'malformed',
      body: '{"not": "a stream"',
      contentType: 'application/json',
    });
    expect(failure).toMatchObject({ type: ErrorTypes.MalformedResponse, nonRetryable: false });
  });

  test('a stream that ends before message_stop is a retryable malformed response', async () => {
    const failure = await failureFor({
      kind: 'malformed',
      body:
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",' +
        '"model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
    });
    expect(failure).toMatchObject({ type: ErrorTypes.MalformedResponse, nonRetryable: false });
  });

  test('a mid-stream overloaded_error event is retryable Overloaded', async () => {
    const failure = await failureFor({
      kind: 'stream_error',
      type: 'overloaded_error',
      message: 'Overloaded',
      afterEvents: 3,
    });
    expect(failure).toMatchObject({ type: ErrorTypes.Overloaded, nonRetryable: false });
    expect(failure.message).toMatch(
      /^Anthropic API stream error overloaded_error: Overloaded \(request req_fake_\d+\)$/,
    );
  });

  test('a mid-stream api_error event is a retryable server error', async () => {
    const failure = await failureFor({ kind: 'stream_error', type: 'api_error', message: 'Internal server error' });
    expect(failure).toMatchObject({ type: ErrorTypes.ServerError, nonRetryable: false });
  });

  test('an empty queue in the fake fails loudly with its own message', async () => {
    const error = await provider
      .call(REQUEST, { signal: new AbortController().signal, heartbeat: () => undefined })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('fake-anthropic: no response queued');
  });
});

describe('classifyModelError (unit)', () => {
  test('passes Temporal failures through unchanged', () => {
    const app = ApplicationFailure.create({ type: 'X', message: 'x', nonRetryable: true });
    const cancelled = new CancelledFailure('CANCELLED');
    expect(classifyModelError(app)).toBe(app);
    expect(classifyModelError(cancelled)).toBe(cancelled);
  });

  test('an SDK user abort becomes the signal’s CancelledFailure, or a new one', () => {
    const controller = new AbortController();
    const reason = new CancelledFailure('CANCELLED');
    controller.abort(reason);
    expect(classifyModelError(new APIUserAbortError(), controller.signal)).toBe(reason);
    expect(classifyModelError(new APIUserAbortError())).toBeInstanceOf(CancelledFailure);
  });

  test('any error while the signal is aborted is a cancellation (an abort can race a socket error)', () => {
    const controller = new AbortController();
    controller.abort();
    expect(classifyModelError(new APIConnectionError({ message: 'boom' }), controller.signal)).toBeInstanceOf(
      CancelledFailure,
    );
  });

  test('an unknown error is retryable ModelError.Unknown, with its message', () => {
    const failure = classifyModelError(new Error('something odd')) as ApplicationFailure;
    expect(failure).toMatchObject({ type: ErrorTypes.Unknown, nonRetryable: false });
    expect(failure.message).toContain('something odd');
  });

  test('missing credentials are a non-retryable authentication failure', () => {
    const failure = classifyModelError(
      new Error('Could not resolve authentication method. Expected one of apiKey, authToken, credentials'),
    ) as ApplicationFailure;
    expect(failure).toMatchObject({ type: ErrorTypes.Authentication, nonRetryable: true });
    expect(failure.message).toContain('ANTHROPIC_API_KEY');
  });

  test('outside jest, a socket dying mid-body arrives as AnthropicError(terminated) with undici causes: Connection', () => {
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const err = new AnthropicError('terminated');
    (err as { cause?: unknown }).cause = new TypeError('terminated', { cause: socket });
    const failure = classifyModelError(err) as ApplicationFailure;
    expect(failure).toMatchObject({ type: ErrorTypes.Connection, nonRetryable: false });
    expect(failure.message).toBe('Anthropic API connection lost: terminated <- other side closed (UND_ERR_SOCKET)');
  });

  test('a JSON SyntaxError under an SDK error is a malformed response', () => {
    const err = new AnthropicError('Unexpected token n in JSON');
    (err as { cause?: unknown }).cause = new SyntaxError('Unexpected token n in JSON');
    expect(classifyModelError(err)).toMatchObject({ type: ErrorTypes.MalformedResponse, nonRetryable: false });
  });

  test('an unlisted 4xx status is retryable Unknown (bounded by the retry policy)', () => {
    const err = APIError.generate(
      418,
      { type: 'error', error: { type: 'teapot', message: 'short and stout' } },
      undefined,
      new Headers(),
    );
    const failure = classifyModelError(err) as ApplicationFailure;
    expect(failure).toMatchObject({ type: ErrorTypes.Unknown, nonRetryable: false });
    expect(failure.message).toBe('Anthropic API 418 teapot: short and stout');
  });

  test('the failure is plain data: details survive JSON', () => {
    const err = APIError.generate(
      429,
      { type: 'error', error: { type: 'rate_limit_error', message: 'slow' } },
      undefined,
      new Headers({ 'retry-after': '2', 'request-id': 'req_9' }),
    );
    const failure = classifyModelError(err) as ApplicationFailure;
    expect(JSON.parse(JSON.stringify(failure.details))).toEqual([
      { status: 429, apiErrorType: 'rate_limit_error', errorCode: null, requestId: 'req_9', retryAfterMs: 2000 },
    ]);
  });
});

describe('retryDelayFromHeaders', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  test('reads retry-after-ms (ms), retry-after (seconds) and retry-after (HTTP date)', () => {
    expect(retryDelayFromHeaders(new Headers({ 'retry-after-ms': '250.5' }), now)).toBe(251);
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:42 GMT' }), now)).toBe(42_000);
    expect(retryDelayFromHeaders({ 'Retry-After': '4' }, now)).toBe(4000);
  });

  test('ignores absent, unparseable, zero, negative and past values; caps absurd ones', () => {
    expect(retryDelayFromHeaders(new Headers(), now)).toBeUndefined();
    expect(retryDelayFromHeaders(undefined, now)).toBeUndefined();
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': '0' }), now)).toBeUndefined();
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': '-5' }), now)).toBeUndefined();
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now)).toBeUndefined();
    expect(retryDelayFromHeaders(new Headers({ 'retry-after': '999999' }), now)).toBe(60 * 60 * 1000);
  });
});
