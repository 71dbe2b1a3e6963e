import Anthropic from '@anthropic-ai/sdk';
import type { Middleware } from '@anthropic-ai/sdk';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { ApplicationFailure } from '@temporalio/common';
import { createHash } from 'node:crypto';
import { ErrorTypes } from '../shared/constants';
import type { ContentBlock, ModelRequest, ModelResponse, StopReason } from '../shared/messages';
import { boundedErrorFetch } from './error-body';
import { classifyModelError } from './errors';
import { invalidUsage, optionalTokenCount, tokenCount } from './usage-check';
import type { ModelCallContext, ModelProvider } from './types';

type ProgressSink = NonNullable<ModelCallContext['progress']>;

type MessageStreamParams = Anthropic.MessageStreamParams;
type ApiMessage = Anthropic.Message;

export interface AnthropicProviderOptions {
  /** Defaults to `ANTHROPIC_API_KEY` (read by the SDK). */
  apiKey?: string;
  /** Defaults to `ANTHROPIC_BASE_URL` (read by the SDK), then the public API. */
  baseURL?: string;
  /** SDK timeout until response headers arrive, ms. Default 10 minutes. */
  timeoutMs?: number;
  /**
   * Abort the call when no bytes (events or pings) arrive for this long, ms, and fail it as a
   * retryable `ModelError.Timeout`. Catches a stream that stalls mid-body, which neither the SDK
   * timeout (headers only) nor a heartbeat timeout (the worker hears of it only on its next
   * heartbeat, which a stalled stream never sends) would end. Default 90 s.
   */
  idleTimeoutMs?: number;
  /**
   * Heartbeat this often while the call is in flight, ms, bytes or not: Temporal delivers a cancel
   * request only in reply to a heartbeat, so a silent request must keep heartbeating to learn it was
   * interrupted. (Stalls are the idle timeout's job, not the heartbeat timeout's.) Also the minimum
   * gap between heartbeats on bytes. Default 1 s; Temporal throttles further.
   */
  heartbeatIntervalMs?: number;
  /**
   * Send top-level `cache_control: {type: 'ephemeral'}` so the API caches the growing prefix of
   * the conversation: an agent loop resends it every turn. Default true.
   */
  promptCaching?: boolean;
  /** Use this client instead of building one (its own retry settings then apply). */
  client?: Anthropic;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 90_000;
const PROVIDER = 'Anthropic API';
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/**
 * The Anthropic Messages API as a `ModelProvider`. One attempt per call (`maxRetries: 0`):
 * Temporal alone retries. The call streams, heartbeats (on bytes and on a timer), aborts with the
 * activity's signal, fails a stalled stream after an idle timeout, and throws only classified
 * failures (see `errors.ts`).
 */
export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  readonly client: Anthropic;
  readonly rateLimitKey: string;
  private readonly idleTimeoutMs: number;
  private readonly heartbeatIntervalMs: number;
  private readonly promptCaching: boolean;

  constructor(options: AnthropicProviderOptions = {}) {
    this.client =
      options.client ??
      new Anthropic({
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
        ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
        maxRetries: 0,
        timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        // An error body is read only so far: a huge one must not become a failure too large to record.
        fetch: boundedErrorFetch(),
      });
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 1000;
    this.promptCaching = options.promptCaching ?? true;
    this.rateLimitKey = rateLimitKey('anthropic', this.client.baseURL, this.client.apiKey ?? this.client.authToken);
  }

  async call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse> {
    const params = toMessageParams(request, { promptCaching: this.promptCaching });

    // Our own controller, so an idle stream can be aborted without pretending the activity was cancelled.
    const controller = new AbortController();
    const onCancel = () => controller.abort(ctx.signal.reason);
    if (ctx.signal.aborted) onCancel();
    else ctx.signal.addEventListener('abort', onCancel, { once: true });

    let idleTimer: NodeJS.Timeout | undefined;
    let idleFired = false;
    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idleFired = true;
        controller.abort();
      }, this.idleTimeoutMs);
    };
    let lastBeat = 0;
    const beat = () => {
      const now = Date.now();
      if (now - lastBeat >= this.heartbeatIntervalMs) {
        lastBeat = now;
        ctx.heartbeat();
      }
    };
    const onBytes = () => {
      armIdle();
      beat();
    };

    armIdle();
    const keepAlive = setInterval(beat, Math.max(this.heartbeatIntervalMs, 50));
    try {
      const stream = this.client.messages.stream(params, {
        signal: controller.signal,
        middleware: [observeBytes(onBytes, ctx.rateLimits)],
      });
      if (ctx.progress) reportDeltas(stream, ctx.progress);
      const message = await stream.finalMessage();
      return toModelResponse(message, stream.request_id ?? requestIdOf(message));
    } catch (err) {
      if (idleFired && !ctx.signal.aborted) {
        throw ApplicationFailure.create({
          type: ErrorTypes.Timeout,
          message: `Anthropic API stream stalled: no data for ${Math.round(this.idleTimeoutMs / 1000)} s`,
          nonRetryable: false,
        });
      }
      throw classifyModelError(err, ctx.signal);
    } finally {
      clearInterval(keepAlive);
      clearTimeout(idleTimer);
      ctx.signal.removeEventListener('abort', onCancel);
    }
  }
}

/**
 * Map our request to Messages API params. Never sends temperature/top_p/top_k (rejected by current
 * models); omits `tools` and `tool_choice` when there are no tools.
 */
export function toMessageParams(request: ModelRequest, options: { promptCaching?: boolean } = {}): MessageStreamParams {
  const params: MessageStreamParams = {
    model: request.model,
    max_tokens: request.maxTokens,
    // Our wire types mirror the API's shapes as plain JSON; blocks pass through untouched.
    messages: request.messages as unknown as Anthropic.MessageParam[],
  };
  if (request.system) params.system = request.system;
  if (request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.input_schema as Anthropic.Tool.InputSchema,
    }));
    if (request.toolChoice) params.tool_choice = request.toolChoice;
  }
  // Structured output: the answer's text is JSON valid against the run's outputSchema.
  if (request.outputSchema) params.output_config = { format: { type: 'json_schema', schema: request.outputSchema } };
  if (options.promptCaching) params.cache_control = { type: 'ephemeral' };
  return params;
}

/** The API message as a plain-JSON `ModelResponse`: content exactly as returned, thinking signatures untouched. */
export function toModelResponse(message: ApiMessage, requestId?: string | null): ModelResponse {
  if (!message || !Array.isArray(message.content)) {
    throw ApplicationFailure.create({
      type: ErrorTypes.MalformedResponse,
      message: 'Anthropic API returned a message without a content array',
      nonRetryable: false,
    });
  }
  const usage = message.usage as unknown as Record<string, unknown> | null | undefined;
  // The run's cost and budget rest on these: a missing or invalid count is a retryable provider error, never 0.
  if (!usage || typeof usage !== 'object') throw invalidUsage(PROVIDER, 'the message has no usage');
  const response: ModelResponse = {
    id: message.id,
    model: message.model,
    // JSON round trip: drops the SDK's non-enumerable helpers and lazy getters; only plain JSON crosses the activity boundary.
    content: JSON.parse(JSON.stringify(message.content)) as ContentBlock[],
    stopReason: (message.stop_reason ?? null) as StopReason | null,
    usage: {
      inputTokens: tokenCount(usage.input_tokens, 'usage.input_tokens', PROVIDER),
      outputTokens: tokenCount(usage.output_tokens, 'usage.output_tokens', PROVIDER),
      cacheReadInputTokens: optionalTokenCount(
        usage.cache_read_input_tokens,
        'usage.cache_read_input_tokens',
        PROVIDER,
      ),
      cacheCreationInputTokens: optionalTokenCount(
        usage.cache_creation_input_tokens,
        'usage.cache_creation_input_tokens',
        PROVIDER,
      ),
    },
  };
  if (requestId) response.requestId = requestId;
  return response;
}

/** `_request_id` is non-enumerable on SDK results. */
function requestIdOf(message: unknown): string | undefined {
  const id = (message as { _request_id?: unknown } | null)?._request_id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Passes every text and thinking delta to `progress`, in order. A block after another of its kind
 * starts with "\n", as the workflow joins text blocks, so the streamed text is the answer's text.
 */
function reportDeltas(stream: Pick<MessageStream, 'on'>, sink: ProgressSink): void {
  const seen = { text: false, thinking: false };
  // Live output is a courtesy: a sink that throws must not fail the call.
  const progress: ProgressSink = (event) => {
    try {
      sink(event);
    } catch {
      // ignored
    }
  };
  stream.on('streamEvent', (event) => {
    if (event.type === 'content_block_start') {
      const kind = event.content_block.type;
      if (kind !== 'text' && kind !== 'thinking') return;
      if (seen[kind]) progress({ kind, delta: '\n' });
      seen[kind] = true;
      const initial = kind === 'text' ? event.content_block.text : event.content_block.thinking;
      if (initial) progress({ kind, delta: initial });
    } else if (event.type === 'content_block_delta') {
      if (event.delta.type === 'text_delta') progress({ kind: 'text', delta: event.delta.text });
      else if (event.delta.type === 'thinking_delta') progress({ kind: 'thinking', delta: event.delta.thinking });
    }
  });
}

/**
 * Calls `onBytes` for every chunk of the response body, pings included: the SDK drops `ping`
 * events before they reach MessageStream listeners, yet they are the proof of life while the model
 * thinks silently.
 */
function observeBytes(onBytes: () => void, onHeaders?: ModelCallContext['rateLimits']): Middleware {
  return async (request, next) => {
    const response = await next(request);
    onBytes();
    try {
      onHeaders?.(response.headers, response.status);
    } catch {
      // The rate budget is advice: a failure to read it must not fail the call.
    }
    if (!response.body) return response;
    const tap = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        onBytes();
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(tap), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * Names a provider key for its rate budget (src/admission/): the provider, the endpoint, and a short
 * fingerprint of the credential, never the credential itself.
 */
export function rateLimitKey(provider: string, baseURL: string, credential: string | null | undefined): string {
  const fingerprint = createHash('sha256')
    .update(credential ?? '')
    .digest('hex')
    .slice(0, 12);
  return `${provider} ${baseURL} ${fingerprint}`;
}
