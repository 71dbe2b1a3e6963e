import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { OpenAIProvider, type OpenAIProviderOptions } from '../../src/models/openai';
import type { ModelCallContext, ModelProgressEvent } from '../../src/models/types';
import { ErrorTypes, type ModelRequest } from '../../src/shared';
import { answer, chatError, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';

// How OpenAIProvider fails: the real `openai` SDK against a local fake Chat Completions server that
// errs, cuts, stalls and garbles its streams; and cancellation.

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'openai:qwen3:8b',
    messages: [{ role: 'user', content: 'List the files' }],
    tools: [],
    maxTokens: 1024,
    ...overrides,
  };
}

type TestContext = ModelCallContext & { beats: number; events: ModelProgressEvent[] };
function context(signal: AbortSignal = new AbortController().signal): TestContext {
  const ctx: TestContext = {
    signal,
    beats: 0,
    events: [],
    heartbeat: () => void (ctx.beats += 1),
    progress: (event) => void ctx.events.push(event),
  };
  return ctx;
}

let fake: FakeOpenAI;
let provider: OpenAIProvider;
const make = (options: OpenAIProviderOptions = {}, env: NodeJS.ProcessEnv = {}) =>
  new OpenAIProvider({ baseURL: fake.url, heartbeatIntervalMs: 0, ...options }, env);

beforeEach(async () => {
  fake = await startFakeOpenAI();
  provider = make({ apiKey: 'sk-test' });
});
afterEach(async () => {
  await fake.close();
});

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

describe('OpenAIProvider: failures are typed and bounded', () => {
  test('429 with retry-after: retryable RateLimited with the delay; without it: no delay', async () => {
    fake.enqueue(
      chatError(429, 'Rate limit reached', {
        type: 'requests',
        code: 'rate_limit_exceeded',
        headers: { 'retry-after': '3' },
      }),
      chatError(429, 'Rate limit reached', { type: 'requests' }),
      chatError(503, 'busy', { type: 'server_error', headers: { 'retry-after-ms': '1500' } }),
    );
    const limited = await failureOf(provider.call(request(), context()));
    expect(limited).toMatchObject({ type: ErrorTypes.RateLimited, nonRetryable: false, nextRetryDelay: 3000 });
    expect(limited.message).toContain('Rate limit reached');
    expect(limited.message).toContain('req_fake_1');
    const plain = await failureOf(provider.call(request(), context()));
    expect(plain).toMatchObject({ type: ErrorTypes.RateLimited, nonRetryable: false });
    expect(plain.nextRetryDelay).toBeUndefined();
    expect(await failureOf(provider.call(request(), context()))).toMatchObject({
      type: ErrorTypes.ServerError,
      nonRetryable: false,
      nextRetryDelay: 1500,
    });
    // One request per call: the SDK retries nothing (Temporal owns retries).
    expect(fake.requests).toHaveLength(3);
  });

  test.each([
    [400, 'invalid_request_error', undefined, ErrorTypes.BadRequest],
    [401, 'invalid_request_error', 'invalid_api_key', ErrorTypes.Authentication],
    [403, 'invalid_request_error', undefined, ErrorTypes.PermissionDenied],
    [404, 'invalid_request_error', 'model_not_found', ErrorTypes.NotFound],
    [422, 'invalid_request_error', undefined, ErrorTypes.Unprocessable],
    [429, 'insufficient_quota', 'insufficient_quota', ErrorTypes.BillingLimit],
  ])('%i %s (%s) is non-retryable %s', async (status, type, code, errorType) => {
    fake.enqueue(chatError(status, `refused with ${status}`, { type, ...(code ? { code } : {}) }));
    const failure = await failureOf(provider.call(request(), context()));
    expect(failure).toMatchObject({ type: errorType, nonRetryable: true });
    expect(failure.message).toContain(`refused with ${status}`);
  });

  test('x-should-retry overrides the status table', async () => {
    fake.enqueue(chatError(500, 'do not retry', { type: 'server_error', headers: { 'x-should-retry': 'false' } }));
    expect(await failureOf(provider.call(request(), context()))).toMatchObject({
      type: ErrorTypes.ServerError,
      nonRetryable: true,
    });
  });

  test('a 401 without a configured key says to set OPENAI_API_KEY', async () => {
    fake.enqueue(chatError(401, 'Incorrect API key provided', { code: 'invalid_api_key' }));
    const failure = await failureOf(make({}, {}).call(request(), context()));
    expect(failure).toMatchObject({ type: ErrorTypes.Authentication, nonRetryable: true });
    expect(failure.message).toContain('no OPENAI_API_KEY is set');
  });

  test('a stream cut midway, a stream that ends without a finish reason, and a reset before any answer are retryable', async () => {
    fake.enqueue({ kind: 'cut', afterChunks: 2 }, { kind: 'end_early', afterChunks: 2 }, { kind: 'cut' });
    for (let i = 0; i < 3; i++) {
      expect(await failureOf(provider.call(request(), context()))).toMatchObject({
        type: ErrorTypes.Connection,
        nonRetryable: false,
      });
    }
  });

  test('malformed chunks are a retryable MalformedResponse', async () => {
    fake.enqueue({ kind: 'malformed' }, { kind: 'malformed', body: 'data: {"id":"x","choices":"nope"}\n\n' });
    for (let i = 0; i < 2; i++) {
      expect(await failureOf(provider.call(request(), context()))).toMatchObject({
        type: ErrorTypes.MalformedResponse,
        nonRetryable: false,
      });
    }
  });

  test('an error sent inside the stream maps by its type', async () => {
    fake.enqueue(
      { kind: 'stream_error', type: 'server_error', message: 'The server had an error' },
      {
        kind: 'stream_error',
        type: 'invalid_request_error',
        message: 'context too long',
        code: 'context_length_exceeded',
      },
    );
    const server = await failureOf(provider.call(request(), context()));
    expect(server).toMatchObject({ type: ErrorTypes.ServerError, nonRetryable: false });
    expect(server.message).toContain('The server had an error');
    expect(await failureOf(provider.call(request(), context()))).toMatchObject({
      type: ErrorTypes.BadRequest,
      nonRetryable: true,
    });
  });

  test('a server that is not there is a retryable connection error', async () => {
    const url = fake.url;
    await fake.close();
    const failure = await failureOf(new OpenAIProvider({ baseURL: url, apiKey: 'x' }, {}).call(request(), context()));
    expect(failure).toMatchObject({ type: ErrorTypes.Connection, nonRetryable: false });
    fake = await startFakeOpenAI();
  });

  test('a stream that stalls is aborted after the idle timeout as a retryable Timeout', async () => {
    fake.enqueue({ kind: 'hang', afterChunks: 2 });
    const started = Date.now();
    const failure = await failureOf(make({ apiKey: 'x', idleTimeoutMs: 300 }).call(request(), context()));
    expect(failure).toMatchObject({ type: ErrorTypes.Timeout, nonRetryable: false });
    expect(failure.message).toContain('stalled');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test('an empty model name is a non-retryable BadRequest, sent nowhere', async () => {
    const failure = await failureOf(provider.call(request({ model: 'openai:' }), context()));
    expect(failure).toMatchObject({ type: ErrorTypes.BadRequest, nonRetryable: true });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('OpenAIProvider: cancellation', () => {
  test('aborting the signal cancels the stream promptly and closes the request', async () => {
    fake.enqueue({ kind: 'hang', afterChunks: 2 });
    const controller = new AbortController();
    const ctx = context(controller.signal);
    const call = provider.call(request(), ctx);
    while (ctx.events.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new CancelledFailure('interrupted'));
    const abortedAt = Date.now();
    const err: unknown = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CancelledFailure);
    expect((err as CancelledFailure).message).toBe('interrupted');
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.requests[0]!.closedAt).toBeDefined();
    expect(fake.requests[0]!.closedAt! - abortedAt).toBeLessThan(5_000); // the request hangs until closed
  });

  test('a signal aborted before the call starts sends nothing that completes', async () => {
    fake.enqueue(answer('never'));
    const controller = new AbortController();
    controller.abort();
    await expect(provider.call(request(), context(controller.signal))).rejects.toBeInstanceOf(CancelledFailure);
  });
});
