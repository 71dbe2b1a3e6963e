import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI, { APIError } from 'openai';
import { ErrorTypes, MAX_MODEL_RESPONSE_BYTES } from '../shared/constants';
import type { ModelRequest, ModelResponse } from '../shared/messages';
import { boundedErrorFetch } from './error-body';
import { cancellationFailure } from './errors';
import { classifyOpenAIError } from './openai-errors';
import { ChunkAccumulator, serverModelName, toChatParams, type MaxTokensField } from './openai-mapping';
import type { ModelCallContext, ModelProvider } from './types';
import { rateLimitKey } from './anthropic';

export { toChatParams, serverModelName, parseArguments, ChunkAccumulator } from './openai-mapping';
export type { MaxTokensField } from './openai-mapping';
export { classifyOpenAIError } from './openai-errors';

/** Model ids this provider serves: `openai:<model>`, the model name being everything after the first colon. */
export const OPENAI_MODEL_PREFIX = 'openai:';

/** Sent as the key when none is configured: local servers (Ollama, vLLM, llama.cpp, LM Studio) ignore it. */
export const PLACEHOLDER_API_KEY = 'not-needed';

export interface OpenAIProviderOptions {
  /** Defaults to `OPENAI_API_KEY`, else a placeholder (a local server needs none). */
  apiKey?: string;
  /** Defaults to `OPENAI_BASE_URL`, else OpenAI's API (`https://api.openai.com/v1`). */
  baseURL?: string;
  /** Until response headers arrive, and until the first chunk, ms. Default 10 minutes (a local model may read a long prompt silently). */
  timeoutMs?: number;
  /** Abort when no chunk arrives for this long once the answer has started, ms: a retryable `ModelError.Timeout`. Default 90 s. */
  idleTimeoutMs?: number;
  /** Heartbeat this often while the call is in flight, and at most this often on chunks, ms. Default 1 s. */
  heartbeatIntervalMs?: number;
  /**
   * The field that carries `maxTokens`. Default: `max_completion_tokens` for OpenAI's own API (its
   * reasoning models refuse `max_tokens`), `max_tokens` for any other base URL (what local servers read).
   */
  maxTokensField?: MaxTokensField;
  /** Use this client instead of building one. */
  client?: OpenAI;
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 90_000;
/** An answer longer than this (characters) cannot be recorded anyway (MAX_MODEL_RESPONSE_BYTES): stop reading it. */
const MAX_STREAMED_CHARS = 2 * MAX_MODEL_RESPONSE_BYTES;

/**
 * Any OpenAI-compatible Chat Completions endpoint as a `ModelProvider`: OpenAI, Ollama, vLLM,
 * llama.cpp's server, LM Studio. One attempt per call (`maxRetries: 0`): Temporal alone retries.
 * Streams with usage, heartbeats on chunks and on a timer, reports text and reasoning deltas as
 * progress, aborts with the activity's signal, fails a stalled stream after an idle timeout, and
 * throws only classified failures (`openai-errors.ts`).
 */
export class OpenAIProvider implements ModelProvider {
  readonly name = 'openai';
  readonly client: OpenAI;
  readonly rateLimitKey: string;
  /** True when no key was configured and the placeholder is sent. */
  readonly keyless: boolean;
  private readonly timeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly maxTokensField: MaxTokensField;

  constructor(options: OpenAIProviderOptions = {}, env: NodeJS.ProcessEnv = process.env) {
    const apiKey = options.apiKey ?? (env.OPENAI_API_KEY?.trim() || undefined);
    this.keyless = !options.client && apiKey === undefined;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.client =
      options.client ??
      new OpenAI({
        apiKey: apiKey ?? PLACEHOLDER_API_KEY,
        baseURL: options.baseURL ?? (env.OPENAI_BASE_URL?.trim() || undefined),
        maxRetries: 0,
        timeout: this.timeoutMs,
        // An error body is read only so far: a huge one must not become a failure too large to record.
        fetch: boundedErrorFetch(),
      });
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 1000;
    this.rateLimitKey = rateLimitKey('openai', this.client.baseURL, this.client.apiKey);
    this.maxTokensField =
      options.maxTokensField ?? (isOpenAIsOwnApi(this.client.baseURL) ? 'max_completion_tokens' : 'max_tokens');
  }

  async call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse> {
    if (serverModelName(request.model).trim() === '') {
      throw ApplicationFailure.create({
        type: ErrorTypes.BadRequest,
        message: `Model id '${request.model}' names no model: write openai:<model>, e.g. openai:gpt-4o-mini or openai:qwen3:8b.`,
        nonRetryable: true,
      });
    }
    const params = toChatParams(request, this.maxTokensField);

    // Our own controller, so an idle stream can be aborted without pretending the activity was cancelled.
    const controller = new AbortController();
    const onCancel = () => controller.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onCancel();
    else ctx.signal.addEventListener('abort', onCancel, { once: true });

    let idleTimer: NodeJS.Timeout | undefined;
    let idleFired = false;
    const armIdle = (ms: number) => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idleFired = true;
        controller.abort();
      }, ms);
    };
    let lastBeat = 0;
    const beat = () => {
      const now = Date.now();
      if (now - lastBeat >= this.heartbeatIntervalMs) {
        lastBeat = now;
        ctx.heartbeat();
      }
    };

    armIdle(this.timeoutMs);
    const keepAlive = setInterval(beat, Math.max(this.heartbeatIntervalMs, 50));
    const answer = new ChunkAccumulator();
    try {
      const {
        data: stream,
        request_id,
        response,
      } = await this.client.chat.completions.create(params, { signal: controller.signal }).withResponse();
      tellRateLimits(ctx, response.headers, response.status);
      for await (const chunk of stream) {
        armIdle(this.idleTimeoutMs);
        beat();
        const { text, thinking } = answer.add(chunk);
        if (thinking) ctx.progress?.({ kind: 'thinking', delta: thinking });
        if (text) ctx.progress?.({ kind: 'text', delta: text });
        if (answer.chars > MAX_STREAMED_CHARS) throw tooLarge(answer.chars);
      }
      // The SDK ends the iteration quietly when its request was aborted: say why it ended.
      if (ctx.signal.aborted) throw cancellationFailure(ctx.signal);
      if (idleFired) throw stalled(this.idleTimeoutMs);
      if (!answer.finished) {
        throw ApplicationFailure.create({
          type: ErrorTypes.Connection,
          message: 'OpenAI-compatible API stream ended before the answer was complete (no finish_reason)',
          nonRetryable: false,
        });
      }
      return answer.toResponse(request.model, () => `call_${randomUUID()}`, request_id);
    } catch (err) {
      if (err instanceof APIError && err.headers && typeof err.status === 'number')
        tellRateLimits(ctx, err.headers, err.status);
      if (idleFired && !ctx.signal.aborted) throw stalled(this.idleTimeoutMs);
      const failure = classifyOpenAIError(err, ctx.signal);
      if (this.keyless && failure instanceof ApplicationFailure && failure.type === ErrorTypes.Authentication) {
        throw ApplicationFailure.create({
          type: failure.type,
          message: `${failure.message} — no OPENAI_API_KEY is set on the worker: set it, or OPENAI_BASE_URL for a local server.`,
          nonRetryable: true,
          details: failure.details as unknown[],
        });
      }
      throw failure;
    } finally {
      clearInterval(keepAlive);
      clearTimeout(idleTimer);
      ctx.signal.removeEventListener('abort', onCancel);
    }
  }
}

/** The answer's headers to the call's rate budget (src/admission/); advice, so a failure there is ignored. */
function tellRateLimits(ctx: ModelCallContext, headers: { get(name: string): string | null }, status: number): void {
  try {
    ctx.rateLimits?.(headers, status);
  } catch {
    // ignored
  }
}

/** Whether a base URL is OpenAI's own API (which wants `max_completion_tokens`). */
export function isOpenAIsOwnApi(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

function stalled(idleTimeoutMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.Timeout,
    message: `OpenAI-compatible API stream stalled: no data for ${Math.round(idleTimeoutMs / 1000)} s`,
    nonRetryable: false,
  });
}

function tooLarge(chars: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.ResponseTooLarge,
    message: `OpenAI-compatible API answer passed ${chars} characters; a run records at most ${MAX_MODEL_RESPONSE_BYTES} bytes per answer. Lower maxTokens.`,
    nonRetryable: true,
  });
}
