import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { AnthropicProvider, toMessageParams } from '../../src/models/anthropic';
import type { ModelCallContext, ModelProgressEvent } from '../../src/models/types';
import type { ModelRequest } from '../../src/shared';
import { ErrorTypes, rawTextOf } from '../../src/shared';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';

const TOOLS: ModelRequest['tools'] = [
  {
    name: 'glob',
    description: 'Find files by pattern',
    input_schema: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] },
  },
];

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'claude-sonnet-5-5',
    messages: [{ role: 'user', content: 'List the files' }],
    tools: [],
    maxTokens: 1024,
    ...overrides,
  };
}

function context(signal: AbortSignal = new AbortController().signal): ModelCallContext & { beats: number } {
  const ctx = { signal, beats: 0, heartbeat: () => void (ctx.beats += 1) };
  return ctx;
}

let fake: FakeAnthropic;
let provider: AnthropicProvider;

beforeEach(async () => {
  fake = await startFakeAnthropic();
  provider = new AnthropicProvider({ apiKey: 'sk-test', baseURL: fake.url, heartbeatIntervalMs: 0 });
});

afterEach(async () => {
  await fake.close();
});

describe('AnthropicProvider: successful calls', () => {
  test('streams a text answer and maps content, stop reason, usage (cache fields), id, model and requestId', async () => {
    fake.enqueue(
      message('Hello from the fake model.', {
        id: 'msg_123',
        requestId: 'req_abc',
        usage: { input_tokens: 11, output_tokens: 7, cache_read_input_tokens: 300, cache_creation_input_tokens: 40 },
      }),
    );
    const ctx = context();
    const response = await provider.call(request(), ctx);

    expect(response).toEqual({
      id: 'msg_123',
      model: 'claude-sonnet-5-5',
      content: [{ type: 'text', text: 'Hello from the fake model.' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 11, outputTokens: 7, cacheReadInputTokens: 300, cacheCreationInputTokens: 40 },
      requestId: 'req_abc',
    });
    // It really streamed, and heartbeated on the way.
    expect(fake.requests[0]!.body.stream).toBe(true);
    expect(ctx.beats).toBeGreaterThan(0);
  });

  test('missing cache counters map to 0', async () => {
    fake.enqueue(message('ok', { usage: { input_tokens: 3, output_tokens: 2 } }));
    const response = await provider.call(request(), context());
    expect(response.usage).toEqual({
      inputTokens: 3,
      outputTokens: 2,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    });
  });

  test('assembles tool_use input from input_json_delta events', async () => {
    const input = { pattern: '**/*.ts', options: { nested: [1, 2, 3], text: 'quote " and unicode ✓' } };
    fake.enqueue(
      message([
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_01', name: 'glob', input },
      ]),
    );
    const response = await provider.call(request({ tools: TOOLS }), context());
    expect(response.stopReason).toBe('tool_use');
    expect(response.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_01', name: 'glob', input },
    ]);
  });

  test('preserves thinking and redacted_thinking blocks verbatim, signatures included, in order', async () => {
    const thinking = {
      type: 'thinking',
      thinking: 'The user wants files; call glob.',
      signature: 'c2lnbmF0dXJlLWJ5dGVz+/==',
    };
    const redacted = { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT' };
    fake.enqueue(message([thinking, redacted, { type: 'text', text: 'Done.' }]));
    const response = await provider.call(request(), context());
    expect(response.content).toEqual([thinking, redacted, { type: 'text', text: 'Done.' }]);
  });

  test('streams every thinking and text delta to progress, in order; text blocks join with a newline as the workflow joins them', async () => {
    const content = [
      { type: 'thinking', thinking: 'First I think. Then I think more.', signature: 'c2ln' },
      { type: 'text', text: 'Part one of the answer, ✓ unicode.' },
      { type: 'tool_use', id: 'toolu_01', name: 'glob', input: { pattern: '*.ts' } },
      { type: 'text', text: 'Part two.' },
    ];
    fake.enqueue(message(content, { stop_reason: 'tool_use' }));
    const events: ModelProgressEvent[] = [];
    const response = await provider.call(request({ tools: TOOLS }), { ...context(), progress: (e) => events.push(e) });
    // Streamed in pieces (the fake splits each block), reassembled exactly.
    expect(events.filter((e) => e.kind === 'text').length).toBeGreaterThan(2);
    const joined = (kind: string) =>
      events
        .filter((e) => e.kind === kind)
        .map((e) => e.delta)
        .join('');
    expect(joined('thinking')).toBe('First I think. Then I think more.');
    expect(joined('text')).toBe(rawTextOf(response.content));
    expect(joined('text')).toBe('Part one of the answer, ✓ unicode.\nPart two.');
    // Thinking came before text, as the model produced it.
    expect(events.findIndex((e) => e.kind === 'text')).toBeGreaterThan(
      events.map((e) => e.kind).lastIndexOf('thinking'),
    );
  });

  test('a progress sink that throws does not fail the call', async () => {
    fake.enqueue(message('still fine'));
    const response = await provider.call(request(), {
      ...context(),
      progress: () => {
        throw new Error('sink broke');
      },
    });
    expect(response.content).toEqual([{ type: 'text', text: 'still fine' }]);
  });

  test('the response is plain JSON (survives a JSON round trip unchanged, no hidden SDK fields)', async () => {
    fake.enqueue(message([{ type: 'tool_use', id: 'toolu_9', name: 'glob', input: { pattern: '*' } }]));
    const response = await provider.call(request({ tools: TOOLS }), context());
    expect(JSON.parse(JSON.stringify(response))).toEqual(response);
    expect(Object.getOwnPropertyNames(response.content[0])).toEqual(Object.keys(response.content[0]!));
    expect(Object.getPrototypeOf(response.content[0])).toBe(Object.prototype);
  });

  test('pings count as proof of life: they heartbeat and keep the idle timer from firing', async () => {
    // 6 pings 60 ms apart outlast a 150 ms idle timeout only if every ping resets it.
    const patient = new AnthropicProvider({
      apiKey: 'sk-test',
      baseURL: fake.url,
      idleTimeoutMs: 150,
      heartbeatIntervalMs: 0,
    });
    fake.enqueue(message('late answer', { pings: 6, eventDelayMs: 60 }));
    const ctx = context();
    const response = await patient.call(request(), ctx);
    expect(response.content).toEqual([{ type: 'text', text: 'late answer' }]);
    expect(ctx.beats).toBeGreaterThanOrEqual(6);
  });
});

describe('AnthropicProvider: request mapping', () => {
  test('sends model, max_tokens, system, messages and tools; never temperature/top_p/top_k', async () => {
    fake.enqueue(message('ok'));
    await provider.call(
      request({ system: 'Be brief.', tools: TOOLS, toolChoice: { type: 'auto' }, maxTokens: 2048 }),
      context(),
    );
    const body = fake.requests[0]!.body;
    expect(body).toMatchObject({
      model: 'claude-sonnet-5-5',
      max_tokens: 2048,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'List the files' }],
      tools: TOOLS,
      tool_choice: { type: 'auto' },
      stream: true,
    });
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_p');
    expect(body).not.toHaveProperty('top_k');
  });

  test('passes tool_choice none (the summary call) with the tools still defined', async () => {
    fake.enqueue(message('summary'));
    await provider.call(request({ tools: TOOLS, toolChoice: { type: 'none' } }), context());
    expect(fake.requests[0]!.body.tool_choice).toEqual({ type: 'none' });
    expect(fake.requests[0]!.body.tools).toHaveLength(1);
  });

  test('omits tools and tool_choice when there are no tools, and system when there is none', async () => {
    fake.enqueue(message('ok'));
    await provider.call(request({ toolChoice: { type: 'auto' } }), context());
    const body = fake.requests[0]!.body;
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('system');
  });

  test('sends assistant turns back exactly as given (thinking blocks unchanged)', async () => {
    const history: ModelRequest['messages'] = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig==' },
          { type: 'tool_use', id: 'toolu_1', name: 'glob', input: { pattern: '*' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.ts', is_error: false }] },
    ];
    fake.enqueue(message('ok'));
    await provider.call(request({ messages: history, tools: TOOLS }), context());
    expect(fake.requests[0]!.body.messages).toEqual(history);
  });

  test('asks for prompt caching by default, and not when disabled', () => {
    expect(toMessageParams(request(), { promptCaching: true }).cache_control).toEqual({ type: 'ephemeral' });
    expect(toMessageParams(request(), { promptCaching: false })).not.toHaveProperty('cache_control');
  });

  test('makes exactly one attempt (SDK retries are off) and sends the API key', async () => {
    fake.enqueue({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' });
    await expect(provider.call(request(), context())).rejects.toBeInstanceOf(ApplicationFailure);
    expect(fake.requests).toHaveLength(1);
    const headers = fake.requests[0]!.headers;
    expect(headers['x-api-key'] ?? headers['authorization']).toContain('sk-test');
  });
});

describe('AnthropicProvider: cancellation and stalls', () => {
  test('aborting the signal during a hung request rejects promptly as a cancellation', async () => {
    fake.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const started = Date.now();
    const call = provider.call(request(), context(controller.signal));
    setTimeout(() => controller.abort(new CancelledFailure('CANCELLED')), 200);
    const error = await call.catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000); // the request hangs until aborted
    expect(error).toBeInstanceOf(CancelledFailure);
    expect((error as CancelledFailure).message).toBe('CANCELLED');
  });

  test('heartbeats on a timer while the request is silent, so a cancel request can reach it', async () => {
    const silent = new AnthropicProvider({ apiKey: 'sk-test', baseURL: fake.url, heartbeatIntervalMs: 50 });
    fake.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const ctx = context(controller.signal);
    const call = silent.call(request(), ctx);
    await new Promise((r) => setTimeout(r, 400));
    expect(ctx.beats).toBeGreaterThanOrEqual(4);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(CancelledFailure);
    // The abort closed the HTTP request, and the timer stopped with the call.
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.requests[0]!.closedAt).toBeDefined();
    const beatsAfter = ctx.beats;
    await new Promise((r) => setTimeout(r, 200));
    expect(ctx.beats).toBe(beatsAfter);
  });

  test('aborting mid-stream (after some events) also rejects as a cancellation', async () => {
    fake.enqueue({ kind: 'hang', afterEvents: 3, message: { content: [{ type: 'text', text: 'partial' }] } });
    const controller = new AbortController();
    const call = provider.call(request(), context(controller.signal));
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await expect(call).rejects.toBeInstanceOf(CancelledFailure);
    expect(Date.now() - started).toBeLessThan(10_000); // the request hangs until aborted
  });

  test('an already-aborted signal never reaches the API', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(provider.call(request(), context(controller.signal))).rejects.toBeInstanceOf(CancelledFailure);
    expect(fake.requests).toHaveLength(0);
  });

  test('a stream that stalls mid-body fails as a retryable timeout, not a cancellation', async () => {
    const stalling = new AnthropicProvider({ apiKey: 'sk-test', baseURL: fake.url, idleTimeoutMs: 300 });
    fake.enqueue({ kind: 'hang', afterEvents: 2 });
    const error = await stalling.call(request(), context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: ErrorTypes.Timeout, nonRetryable: false });
  });
});
