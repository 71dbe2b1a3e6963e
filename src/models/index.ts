/**
 * Model providers behind one small interface (`ModelProvider`), and the resolver the worker uses
 * to pick one per model id: `offline*` → the offline demo model, `openai:<model>` → any
 * OpenAI-compatible endpoint, anything else → Anthropic.
 */
import { DEFAULT_ANTHROPIC_MODEL, OFFLINE_MODEL } from '../shared/constants';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic';
import { OfflineDemoModel } from './offline';
import { OPENAI_MODEL_PREFIX, OpenAIProvider, serverModelName, type OpenAIProviderOptions } from './openai';
import type { ModelProvider, ModelResolver } from './types';

export * from './types';
export { AnthropicProvider, DEFAULT_IDLE_TIMEOUT_MS, toMessageParams, toModelResponse } from './anthropic';
export type { AnthropicProviderOptions } from './anthropic';
export { classifyModelError, cancellationFailure, retryDelayFromHeaders, MAX_RETRY_AFTER_MS } from './errors';
export type { ModelErrorDetails } from './errors';
export {
  OpenAIProvider,
  OPENAI_MODEL_PREFIX,
  PLACEHOLDER_API_KEY,
  classifyOpenAIError,
  serverModelName,
  toChatParams,
} from './openai';
export type { OpenAIProviderOptions } from './openai';
export { OfflineDemoModel, decideOfflineTurn, planFromPrompt } from './offline';
export { ScriptedModel, text, toolUse, fail, delayed } from './scripted';
export type { ScriptStep, ScriptedResponse, ScriptedFunction, ScriptedError, DelayedStep } from './scripted';

export interface ModelResolverOptions {
  /** Options for the Anthropic provider, built on first use of a non-offline model. */
  anthropic?: AnthropicProviderOptions;
  /** Replace the Anthropic provider (tests). */
  createAnthropic?: () => ModelProvider;
  /**
   * Options for the OpenAI-compatible provider, built on first use of an `openai:` model. Without
   * them it takes the Anthropic options' `idleTimeoutMs` (the worker's one model idle timeout).
   */
  openai?: OpenAIProviderOptions;
  /** Replace the OpenAI-compatible provider (tests). */
  createOpenAI?: () => ModelProvider;
}

/** Model ids the offline demo model answers: `offline-demo`, `offline-…`. */
export function isOfflineModel(model: string): boolean {
  return model.startsWith('offline');
}

/** Model ids of OpenAI-compatible endpoints: `openai:<model>` (`openai:gpt-4o-mini`, `openai:qwen3:8b`). */
export function isOpenAIModel(model: string): boolean {
  return model.startsWith(OPENAI_MODEL_PREFIX);
}

/**
 * Picks the provider for a model id. Each client is built lazily, once, so a worker without an
 * API key can still serve offline runs, and one without OpenAI settings Anthropic runs.
 */
export function createModelResolver(options: ModelResolverOptions = {}): ModelResolver {
  const offline = new OfflineDemoModel();
  let anthropic: ModelProvider | undefined;
  let openai: ModelProvider | undefined;
  return (model: string) => {
    if (isOfflineModel(model)) return offline;
    if (isOpenAIModel(model)) {
      const idle = options.anthropic?.idleTimeoutMs;
      openai ??= options.createOpenAI
        ? options.createOpenAI()
        : new OpenAIProvider(options.openai ?? (idle !== undefined ? { idleTimeoutMs: idle } : {}));
      return openai;
    }
    anthropic ??= options.createAnthropic ? options.createAnthropic() : new AnthropicProvider(options.anthropic);
    return anthropic;
  };
}

/** Whether this process has Anthropic credentials (`ANTHROPIC_API_KEY`, or `ANTHROPIC_AUTH_TOKEN`). */
export function anthropicKeyPresent(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim());
}

export interface ModelSetup {
  hasApiKey: boolean;
  /** The model a run uses when it names none: `DURABLE_AGENT_MODEL`, else Claude with a key, else offline. */
  defaultModel: string;
  offline: boolean;
  /** One line for the CLI. */
  summary: string;
}

/**
 * What model setup this process has, in one line for the CLI. For an `openai:` model, `hasApiKey`
 * says whether `OPENAI_API_KEY` is set (a local server at `OPENAI_BASE_URL` needs none).
 */
export function describeModelSetup(env: NodeJS.ProcessEnv = process.env): ModelSetup {
  const anthropicKey = anthropicKeyPresent(env);
  const defaultModel = env.DURABLE_AGENT_MODEL?.trim() || (anthropicKey ? DEFAULT_ANTHROPIC_MODEL : OFFLINE_MODEL);
  const offline = isOfflineModel(defaultModel);
  if (isOpenAIModel(defaultModel)) return describeOpenAISetup(defaultModel, env);
  const hasApiKey = anthropicKey;
  const summary = offline
    ? hasApiKey
      ? `Running on the offline scripted model (${defaultModel}), as DURABLE_AGENT_MODEL asks.`
      : `No ANTHROPIC_API_KEY set: running on the offline scripted model (${defaultModel}). Set ANTHROPIC_API_KEY to use Claude.`
    : `Using ${defaultModel} via the Anthropic API.`;
  return { hasApiKey, defaultModel, offline, summary };
}

function describeOpenAISetup(defaultModel: string, env: NodeJS.ProcessEnv): ModelSetup {
  const hasApiKey = Boolean(env.OPENAI_API_KEY?.trim());
  const baseURL = env.OPENAI_BASE_URL?.trim();
  const name = serverModelName(defaultModel).trim();
  const where = baseURL ? `the OpenAI-compatible API at ${baseURL}` : 'the OpenAI API (https://api.openai.com/v1)';
  const key = hasApiKey
    ? ''
    : baseURL
      ? ' No OPENAI_API_KEY set: a placeholder key is sent (a local server needs none).'
      : ' No OPENAI_API_KEY set: OpenAI will refuse the calls. Set it, or OPENAI_BASE_URL for a local server.';
  const summary = name
    ? `Using ${name} via ${where}.${key}`
    : `DURABLE_AGENT_MODEL '${defaultModel}' names no model: write openai:<model>, e.g. openai:qwen3:8b.`;
  return { hasApiKey, defaultModel, offline: false, summary };
}
