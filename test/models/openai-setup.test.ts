import {
  createModelResolver,
  describeModelSetup,
  isOpenAIModel,
  OpenAIProvider,
  ScriptedModel,
  serverModelName,
  toChatParams,
} from '../../src/models';
import { isOpenAIsOwnApi } from '../../src/models/openai';
import {
  contextWindowOf,
  contextWindowSetting,
  costOf,
  DEFAULT_CONTEXT_WINDOW_TOKENS,
  DEFAULT_OPENAI_COMPATIBLE_CONTEXT_WINDOW_TOKENS,
  hasKnownPrice,
  ZERO_USAGE,
} from '../../src/shared';

describe('resolver', () => {
  test('openai: ids go to one lazily built OpenAI-compatible provider; other ids are untouched', () => {
    let openai = 0;
    let anthropic = 0;
    const fakeOpenAI = new ScriptedModel([]);
    const fakeAnthropic = new ScriptedModel([]);
    const resolve = createModelResolver({
      createOpenAI: () => (openai++, fakeOpenAI),
      createAnthropic: () => (anthropic++, fakeAnthropic),
    });
    expect(openai).toBe(0);
    expect(resolve('openai:gpt-4o-mini')).toBe(fakeOpenAI);
    expect(resolve('openai:qwen3:8b')).toBe(fakeOpenAI);
    expect(resolve('claude-sonnet-5-5')).toBe(fakeAnthropic);
    expect(resolve('openai-ish')).toBe(fakeAnthropic);
    expect([openai, anthropic]).toEqual([1, 1]);
  });

  test('the real provider gets the options (SDK retries off), else the worker-wide idle timeout', () => {
    const resolve = createModelResolver({ openai: { apiKey: 'sk-x', baseURL: 'http://127.0.0.1:9/v1' } });
    const provider = resolve('openai:m') as OpenAIProvider;
    expect(provider).toBeInstanceOf(OpenAIProvider);
    expect(provider.client.baseURL).toBe('http://127.0.0.1:9/v1');
    expect(provider.client.maxRetries).toBe(0);
    const inherited = createModelResolver({ anthropic: { idleTimeoutMs: 1234 } })('openai:m') as OpenAIProvider;
    expect((inherited as unknown as { idleTimeoutMs: number }).idleTimeoutMs).toBe(1234);
  });

  test('the model name is everything after the first colon', () => {
    expect(isOpenAIModel('openai:qwen3:8b')).toBe(true);
    expect(isOpenAIModel('claude-haiku-4-5')).toBe(false);
    expect(serverModelName('openai:qwen3:8b')).toBe('qwen3:8b');
    expect(serverModelName('openai:hf.co/org/model:Q4_K_M')).toBe('hf.co/org/model:Q4_K_M');
  });

  test('max_completion_tokens for OpenAI itself, max_tokens for other servers', () => {
    expect(isOpenAIsOwnApi('https://api.openai.com/v1')).toBe(true);
    expect(isOpenAIsOwnApi('http://localhost:11434/v1')).toBe(false);
    const req = { model: 'openai:gpt-4o', messages: [], tools: [], maxTokens: 99 };
    expect(toChatParams(req, 'max_completion_tokens')).toMatchObject({ max_completion_tokens: 99 });
    expect(toChatParams(req)).toMatchObject({ max_tokens: 99 });
    expect(toChatParams(req)).not.toHaveProperty('max_completion_tokens');
  });
});

describe('describeModelSetup for openai: models', () => {
  test('names the model and the endpoint, and what a missing key means', () => {
    const local = describeModelSetup({
      DURABLE_AGENT_MODEL: 'openai:qwen3:8b',
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
    });
    expect(local).toMatchObject({ defaultModel: 'openai:qwen3:8b', offline: false, hasApiKey: false });
    expect(local.summary).toBe(
      'Using qwen3:8b via the OpenAI-compatible API at http://localhost:11434/v1. No OPENAI_API_KEY set: a placeholder key is sent (a local server needs none).',
    );
    const hosted = describeModelSetup({ DURABLE_AGENT_MODEL: 'openai:gpt-4o-mini', OPENAI_API_KEY: 'sk-1' });
    expect(hosted).toMatchObject({ hasApiKey: true });
    expect(hosted.summary).toBe('Using gpt-4o-mini via the OpenAI API (https://api.openai.com/v1).');
    expect(describeModelSetup({ DURABLE_AGENT_MODEL: 'openai:gpt-4o' }).summary).toContain(
      'OpenAI will refuse the calls',
    );
    expect(describeModelSetup({ DURABLE_AGENT_MODEL: 'openai:' }).summary).toContain('names no model');
  });
});

describe('prices and context windows of openai: models', () => {
  const usage = { ...ZERO_USAGE, inputTokens: 1_000_000, cacheReadInputTokens: 1_000_000, outputTokens: 1_000_000 };

  test('listed OpenAI models and their dated snapshots are priced; everything else is unknown (null), never 0', () => {
    expect(costOf('openai:gpt-4o-mini', usage)).toBeCloseTo(0.15 + 0.075 + 0.6, 9);
    expect(costOf('openai:gpt-4o-2024-08-06', usage)).toBeCloseTo(2.5 + 1.25 + 10, 9);
    expect(costOf('openai:gpt-4.1-nano-2025-04-14', usage)).toBeCloseTo(0.1 + 0.025 + 0.4, 9);
    // An older snapshot with another price, an unlisted variant, a local model: unknown.
    expect(costOf('openai:gpt-4o-2024-05-13', usage)).toBeNull();
    expect(costOf('openai:gpt-4o-audio-preview', usage)).toBeNull();
    expect(costOf('openai:qwen3:8b', usage)).toBeNull();
    expect(hasKnownPrice('openai:llama3.1')).toBe(false);
    // Anthropic's prefix matching is unchanged.
    expect(costOf('claude-haiku-4-5-20251001', { ...ZERO_USAGE, outputTokens: 1_000_000 })).toBe(5);
  });

  test('context windows: known OpenAI models, a modest default for other openai: models, Anthropic unchanged', () => {
    expect(contextWindowOf('openai:gpt-4o')).toBe(128_000);
    expect(contextWindowOf('openai:gpt-4o-mini-2024-07-18')).toBe(128_000);
    expect(contextWindowOf('openai:gpt-4.1')).toBe(1_047_576);
    expect(contextWindowOf('openai:qwen3:8b')).toBe(DEFAULT_OPENAI_COMPATIBLE_CONTEXT_WINDOW_TOKENS);
    expect(contextWindowOf('claude-sonnet-5-5')).toBe(DEFAULT_CONTEXT_WINDOW_TOKENS);
  });

  test('DURABLE_AGENT_CONTEXT_WINDOW: tokens or k, refused readably otherwise', () => {
    expect(contextWindowSetting({})).toBeUndefined();
    expect(contextWindowSetting({ DURABLE_AGENT_CONTEXT_WINDOW: ' ' })).toBeUndefined();
    expect(contextWindowSetting({ DURABLE_AGENT_CONTEXT_WINDOW: '40960' })).toBe(40_960);
    expect(contextWindowSetting({ DURABLE_AGENT_CONTEXT_WINDOW: '128k' })).toBe(128_000);
    for (const bad of ['12', '1e6', '-5', '32 k', 'lots', '999999999k']) {
      expect(() => contextWindowSetting({ DURABLE_AGENT_CONTEXT_WINDOW: bad })).toThrow(
        /DURABLE_AGENT_CONTEXT_WINDOW must be a whole number of tokens/,
      );
    }
  });
});
