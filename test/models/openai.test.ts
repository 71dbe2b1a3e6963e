import { OpenAIProvider, type OpenAIProviderOptions } from '../../src/models/openai';
import type { ModelCallContext, ModelProgressEvent } from '../../src/models/types';
import { type ModelRequest, type ToolUseBlock } from '../../src/shared';
import { answer, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';

// The real `openai` SDK, driven by OpenAIProvider, against a local fake Chat Completions server.

const TOOLS: ModelRequest['tools'] = [
  {
    name: 'bash',
    description: 'Run a command',
    input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

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

describe('OpenAIProvider: answers', () => {
  test('streams text: content, stop reason, usage (cached split out), id, prefixed model, request id, progress and heartbeats', async () => {
    fake.enqueue(
      answer('Hello from the fake model.', {
        id: 'chatcmpl-1',
        requestId: 'req_abc',
        usage: { prompt_tokens: 1000, completion_tokens: 7, cached_tokens: 600 },
        pieceChars: 5,
      }),
    );
    const ctx = context();
    const response = await provider.call(request({ system: 'Be brief.' }), ctx);

    expect(response).toEqual({
      id: 'chatcmpl-1',
      model: 'openai:qwen3:8b',
      content: [{ type: 'text', text: 'Hello from the fake model.' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 400, outputTokens: 7, cacheReadInputTokens: 600, cacheCreationInputTokens: 0 },
      requestId: 'req_abc',
    });
    expect(ctx.events.map((e) => e.delta).join('')).toBe('Hello from the fake model.');
    expect(ctx.events.every((e) => e.kind === 'text')).toBe(true);
    expect(ctx.events.length).toBeGreaterThan(3);
    expect(ctx.beats).toBeGreaterThan(3);

    const [sent] = fake.requests;
    expect(sent!.headers.authorization).toBe('Bearer sk-test');
    expect(sent!.body).toEqual({
      model: 'qwen3:8b',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'List the files' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 1024,
    });
  });

  test('parallel tool calls become tool_use blocks in order; tool specs and tool_choice are sent', async () => {
    fake.enqueue(
      toolCalls([
        { id: 'call_a', name: 'bash', arguments: { command: 'ls' } },
        { id: 'call_b', name: 'bash', arguments: { command: 'pwd' } },
      ]),
    );
    const response = await provider.call(request({ tools: TOOLS, toolChoice: { type: 'auto' } }), context());
    expect(response.stopReason).toBe('tool_use');
    expect(response.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'bash', input: { command: 'ls' } },
      { type: 'tool_use', id: 'call_b', name: 'bash', input: { command: 'pwd' } },
    ]);
    expect(fake.requests[0]!.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'bash', description: 'Run a command', parameters: TOOLS[0]!.input_schema },
      },
    ]);
    expect(fake.requests[0]!.body.tool_choice).toBe('auto');
  });

  test('calls all numbered index 0, or sent without ids, still come out as separate calls with unique ids', async () => {
    fake.enqueue(
      toolCalls(
        [
          { id: 'call_x', name: 'bash', arguments: { command: 'a' } },
          { id: 'call_y', name: 'bash', arguments: { command: 'b' } },
        ],
        { zeroIndexes: true },
      ),
      toolCalls([
        { id: null, name: 'bash', arguments: { command: 'c' } },
        { id: null, name: 'bash', arguments: { command: 'd' } },
      ]),
    );
    const zero = await provider.call(request({ tools: TOOLS }), context());
    expect(zero.content).toMatchObject([
      { id: 'call_x', input: { command: 'a' } },
      { id: 'call_y', input: { command: 'b' } },
    ]);
    const anonymous = await provider.call(request({ tools: TOOLS }), context());
    expect(anonymous.content).toMatchObject([{ input: { command: 'c' } }, { input: { command: 'd' } }]);
    const ids = anonymous.content.map((b) => (b as ToolUseBlock).id);
    expect(new Set(ids).size).toBe(2);
    expect(ids.every((id) => /^call_[0-9a-f-]{36}$/.test(id))).toBe(true);
  });

  test('arguments that are not JSON are kept as the raw string (the tool layer refuses them readably); empty ones are {}', async () => {
    fake.enqueue(
      toolCalls([
        { name: 'bash', arguments: '{"command": "ls' },
        { name: 'bash', arguments: '' },
      ]),
    );
    const response = await provider.call(request({ tools: TOOLS }), context());
    expect(response.content.map((b) => (b as ToolUseBlock).input)).toEqual(['{"command": "ls', {}]);
  });

  test('reasoning deltas (reasoning_content or reasoning) become a thinking block first and thinking progress', async () => {
    fake.enqueue(
      answer('42', { reasoning: 'Let me think about it.' }),
      answer('43', { reasoning: 'Ollama names it reasoning.', reasoningField: 'reasoning' }),
    );
    const ctx = context();
    const first = await provider.call(request(), ctx);
    expect(first.content).toEqual([
      { type: 'thinking', thinking: 'Let me think about it.' },
      { type: 'text', text: '42' },
    ]);
    expect(
      ctx.events
        .filter((e) => e.kind === 'thinking')
        .map((e) => e.delta)
        .join(''),
    ).toBe('Let me think about it.');
    expect(ctx.events.findIndex((e) => e.kind === 'text')).toBeGreaterThan(0);
    const second = await provider.call(request(), context());
    expect(second.content[0]).toEqual({ type: 'thinking', thinking: 'Ollama names it reasoning.' });
  });

  test.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['stop', 'end_turn'],
    ['something_new', null],
  ])('finish_reason %s maps to stop reason %s', async (finishReason, stopReason) => {
    fake.enqueue(answer('text', { finishReason }));
    expect((await provider.call(request(), context())).stopReason).toBe(stopReason);
  });

  test("tool calls that end with finish_reason 'stop' (some servers) still run: tool_use", async () => {
    fake.enqueue(toolCalls([{ name: 'bash', arguments: { command: 'ls' } }], { finishReason: 'stop' }));
    expect((await provider.call(request({ tools: TOOLS }), context())).stopReason).toBe('tool_use');
  });

  test('a local server needs no key: a placeholder is sent when OPENAI_API_KEY is unset', async () => {
    fake.enqueue(answer('ok'));
    const keyless = make({}, {});
    expect(keyless.keyless).toBe(true);
    await keyless.call(request(), context());
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer not-needed');
  });
});

describe('OpenAIProvider: the conversation as Chat Completions messages', () => {
  test('tool_use ↔ tool_calls, tool_result ↔ role tool (errors marked), thinking not sent back, toolChoice none', async () => {
    fake.enqueue(answer('Summary.'));
    await provider.call(
      request({
        tools: TOOLS,
        toolChoice: { type: 'none' },
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm' },
              { type: 'text', text: 'Running two.' },
              { type: 'tool_use', id: 'c1', name: 'bash', input: { command: 'ls' } },
              { type: 'tool_use', id: 'c2', name: 'bash', input: '{"command": "x' },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'c1', content: 'a.txt' },
              { type: 'tool_result', tool_use_id: 'c2', content: 'Invalid input for tool', is_error: true },
              { type: 'text', text: 'Also: hurry.' },
            ],
          },
        ],
      }),
      context(),
    );
    const body = fake.requests[0]!.body;
    expect(body.tool_choice).toBe('none');
    expect(body.messages).toEqual([
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: 'Running two.',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
          { id: 'c2', type: 'function', function: { name: 'bash', arguments: '{"command": "x' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'c2', content: 'Error: Invalid input for tool' },
      { role: 'user', content: 'Also: hurry.' },
    ]);
  });
});

describe('the fake server', () => {
  test('answers non-streamed requests too, tool calls and reasoning included', async () => {
    fake.enqueue(
      toolCalls([{ id: 'call_n', name: 'bash', arguments: { command: 'ls' } }], {
        text: 'Listing.',
        reasoning: 'Need the files.',
        usage: { prompt_tokens: 7, completion_tokens: 3 },
      }),
    );
    const completion = await provider.client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: 'Listing.',
        reasoning_content: 'Need the files.',
        tool_calls: [{ id: 'call_n', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
      },
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
  });
});
