import { AnthropicProvider } from '../../src/models/anthropic';
import {
  anthropicKeyPresent,
  createModelResolver,
  describeModelSetup,
  isOfflineModel,
  OfflineDemoModel,
  ScriptedModel,
} from '../../src/models';
import { DEFAULT_ANTHROPIC_MODEL, OFFLINE_MODEL } from '../../src/shared';

test('offline model ids resolve to the offline demo model, everything else to one lazily built Anthropic provider', () => {
  let built = 0;
  const fake = new ScriptedModel([]);
  const resolve = createModelResolver({
    createAnthropic: () => {
      built += 1;
      return fake;
    },
  });
  expect(resolve(OFFLINE_MODEL)).toBeInstanceOf(OfflineDemoModel);
  expect(resolve('offline-anything')).toBe(resolve(OFFLINE_MODEL));
  expect(built).toBe(0);
  expect(resolve('claude-sonnet-5-5')).toBe(fake);
  expect(resolve('claude-opus-5-5')).toBe(fake);
  expect(built).toBe(1);
});

test('the default Anthropic provider gets the resolver options', () => {
  const resolve = createModelResolver({ anthropic: { apiKey: 'sk-x', baseURL: 'http://127.0.0.1:9' } });
  const provider = resolve('claude-haiku-4-5');
  expect(provider).toBeInstanceOf(AnthropicProvider);
  expect((provider as AnthropicProvider).client.baseURL).toBe('http://127.0.0.1:9');
  expect((provider as AnthropicProvider).client.maxRetries).toBe(0);
});

test('isOfflineModel', () => {
  expect(isOfflineModel('offline-demo')).toBe(true);
  expect(isOfflineModel('claude-sonnet-5-5')).toBe(false);
});

test('describeModelSetup and anthropicKeyPresent read the environment', () => {
  expect(anthropicKeyPresent({})).toBe(false);
  expect(anthropicKeyPresent({ ANTHROPIC_API_KEY: '  ' })).toBe(false);
  expect(anthropicKeyPresent({ ANTHROPIC_API_KEY: 'sk-1' })).toBe(true);

  const none = describeModelSetup({});
  expect(none).toMatchObject({ hasApiKey: false, defaultModel: OFFLINE_MODEL, offline: true });
  expect(none.summary).toContain('running on the offline scripted model');

  const keyed = describeModelSetup({ ANTHROPIC_API_KEY: 'sk-1' });
  expect(keyed).toMatchObject({ hasApiKey: true, defaultModel: DEFAULT_ANTHROPIC_MODEL, offline: false });

  const chosen = describeModelSetup({ ANTHROPIC_API_KEY: 'sk-1', DURABLE_AGENT_MODEL: 'offline-demo' });
  expect(chosen).toMatchObject({ defaultModel: 'offline-demo', offline: true });
});
