/**
 * Model providers behind one small interface (`ModelProvider`), and the resolver the worker uses
 * to pick one per model id: `offline*` → the offline demo model, anything else → Anthropic.
 */
import { DEFAULT_ANTHROPIC_MODEL, OFFLINE_MODEL } from '../shared/constants';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic';
import { OfflineDemoModel } from './offline';
import type { ModelProvider, ModelResolver } from './types';

export * from './types';
export { AnthropicProvider, DEFAULT_IDLE_TIMEOUT_MS, toMessageParams, toModelResponse } from './anthropic';
export type { AnthropicProviderOptions } from './anthropic';
export { classifyModelError, cancellationFailure, retryDelayFromHeaders, MAX_RETRY_AFTER_MS } from './errors';
export type { ModelErrorDetails } from './errors';
export { OfflineDemoModel, decideOfflineTurn, planFromPrompt } from './offline';
export { ScriptedModel, text, toolUse, fail, delayed } from './scripted';
export type { ScriptStep, ScriptedResponse, ScriptedFunction, ScriptedError, DelayedStep } from './scripted';

export interface ModelResolverOptions {
  /** Options for the Anthropic provider, built on first use of a non-offline model. */
  anthropic?: AnthropicProviderOptions;
  /** Replace the Anthropic provider (tests). */
  createAnthropic?: () => ModelProvider;
}

/** Model ids the offline demo model answers: `offline-demo`, `offline-…`. */
export function isOfflineModel(model: string): boolean {
  return model.startsWith('offline');
}

/**
 * Picks the provider for a model id. The Anthropic client is built lazily, once, so a worker
 * without an API key can still serve offline runs.
 */
export function createModelResolver(options: ModelResolverOptions = {}): ModelResolver {
  const offline = new OfflineDemoModel();
  let anthropic: ModelProvider | undefined;
  return (model: string) => {
    if (isOfflineModel(model)) return offline;
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

/** What model setup this process has, in one line for the CLI. */
export function describeModelSetup(env: NodeJS.ProcessEnv = process.env): ModelSetup {
  const hasApiKey = anthropicKeyPresent(env);
  const defaultModel = env.DURABLE_AGENT_MODEL?.trim() || (hasApiKey ? DEFAULT_ANTHROPIC_MODEL : OFFLINE_MODEL);
  const offline = isOfflineModel(defaultModel);
  const summary = offline
    ? hasApiKey
      ? `Running on the offline scripted model (${defaultModel}), as DURABLE_AGENT_MODEL asks.`
      : `No ANTHROPIC_API_KEY set: running on the offline scripted model (${defaultModel}). Set ANTHROPIC_API_KEY to use Claude.`
    : `Using ${defaultModel} via the Anthropic API.`;
  return { hasApiKey, defaultModel, offline, summary };
}
