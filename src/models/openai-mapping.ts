/**
 * The canonical conversation (Anthropic-format blocks, `src/shared/messages.ts`) mapped to Chat
 * Completions parameters, and streamed Chat Completions chunks folded back into a `ModelResponse`.
 *
 * Mapping, both ways:
 * - system prompt ↔ a leading `role: 'system'` message;
 * - assistant text ↔ `content`; assistant `tool_use` blocks (parallel ones included) ↔ `tool_calls`
 *   (`arguments` is the input as a JSON string);
 * - user `tool_result` blocks ↔ `role: 'tool'` messages, in order, right after the assistant turn;
 *   an error result is sent as `Error: …` (Chat Completions has no `is_error` flag);
 * - reasoning deltas (`reasoning_content`, or `reasoning`) ↔ a `thinking` block first in the turn.
 *   Thinking is not sent back: servers that produce it expect only the final text in the history.
 * - arguments that are not valid JSON become the raw string as `input`: the tool registry refuses a
 *   string that is not valid JSON with an `is_error` result that says so, and the string goes back
 *   to the server exactly as the model wrote it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import { ErrorTypes } from '../shared/constants';
import type { ContentBlock, Message, ModelRequest, ModelResponse, StopReason } from '../shared/messages';
import { invalidUsage, optionalTokenCount, tokenCount } from './usage-check';
import { OPENAI_SCHEMA_NAME, openAIStrictCompatible } from './structured-output';

const PROVIDER = 'OpenAI-compatible API';

type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsStreaming;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

/** Which field carries the output limit: `max_completion_tokens` (OpenAI's API) or the older `max_tokens`. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/** The model name the server knows: everything after the first colon of `openai:<model>`. */
export function serverModelName(model: string): string {
  const colon = model.indexOf(':');
  return colon >= 0 && model.slice(0, colon) === 'openai' ? model.slice(colon + 1) : model;
}

/** Our request as streaming Chat Completions parameters (`tools` and `tool_choice` only when there are tools). */
export function toChatParams(request: ModelRequest, maxTokensField: MaxTokensField = 'max_tokens'): ChatParams {
  const messages: ChatMessage[] = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push(...toChatMessages(message));
  const params: ChatParams = {
    model: serverModelName(request.model),
    messages,
    stream: true,
    stream_options: { include_usage: true },
    [maxTokensField]: request.maxTokens,
  };
  if (request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
    const choice = request.toolChoice;
    if (choice) {
      params.tool_choice =
        choice.type === 'tool'
          ? { type: 'function', function: { name: choice.name } }
          : choice.type === 'any'
            ? 'required'
            : choice.type;
    }
  }
  if (request.outputSchema) {
    params.response_format = {
      type: 'json_schema',
      json_schema: {
        name: OPENAI_SCHEMA_NAME,
        schema: request.outputSchema,
        strict: openAIStrictCompatible(request.outputSchema),
      },
    };
  }
  return params;
}

function toChatMessages(message: Message): ChatMessage[] {
  if (typeof message.content === 'string') {
    return [message.role === 'user' ? { role: 'user', content: message.content } : assistant(message.content, [])];
  }
  const texts: string[] = [];
  const calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
  const results: ChatMessage[] = [];
  for (const block of message.content) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') {
      const { id, name, input } = block as { id?: unknown; name?: unknown; input?: unknown };
      calls.push({
        id: String(id),
        type: 'function',
        function: { name: String(name), arguments: typeof input === 'string' ? input : JSON.stringify(input ?? {}) },
      });
    } else if (block.type === 'tool_result') {
      const { tool_use_id, content, is_error } = block as {
        tool_use_id?: unknown;
        content?: unknown;
        is_error?: unknown;
      };
      const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
      results.push({
        role: 'tool',
        tool_call_id: String(tool_use_id),
        content: is_error === true && !/^error\b/i.test(text) ? `Error: ${text}` : text,
      });
    }
    // Thinking and other provider-specific blocks are not part of a Chat Completions history.
  }
  if (message.role === 'assistant') return [assistant(texts.join('\n'), calls)];
  // Tool results must directly follow the assistant turn that called them; any text comes after.
  return texts.length > 0 ? [...results, { role: 'user', content: texts.join('\n') }] : results;
}

function assistant(text: string, calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[]): ChatMessage {
  const message: OpenAI.Chat.ChatCompletionAssistantMessageParam = { role: 'assistant', content: text || null };
  if (calls.length > 0) message.tool_calls = calls;
  else if (!text) message.content = '';
  return message;
}

const FINISH_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

/** Ids and names from the server are cut to this: a hostile server's 1 GB id must not reach history. */
const MAX_NAME_CHARS = 256;

interface ToolCallSlot {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Folds streamed chunks into one answer. Chunks are hostile JSON: anything that is not the shape
 * Chat Completions promises fails the call as a retryable `ModelError.MalformedResponse`.
 */
export class ChunkAccumulator {
  id = '';
  model = '';
  private text = '';
  private thinking = '';
  private readonly calls: ToolCallSlot[] = [];
  /** Position in `calls` of each stream `index`. */
  private readonly slotOfIndex = new Map<number, number>();
  finishReason: string | null = null;
  /** Characters of text, reasoning and tool arguments received so far. */
  chars = 0;
  /** The last usage report of the stream (servers that repeat it send running totals). */
  private usage: Record<string, unknown> | undefined;

  /** Adds one chunk; returns the text and reasoning it carried, for progress events. */
  add(chunk: unknown): { text: string; thinking: string } {
    if (!isRecord(chunk)) throw malformed('a stream chunk is not a JSON object');
    // Names the server chose are cut: they are recorded with the answer.
    if (typeof chunk.id === 'string' && !this.id) this.id = chunk.id.slice(0, MAX_NAME_CHARS);
    if (typeof chunk.model === 'string' && chunk.model && !this.model)
      this.model = chunk.model.slice(0, MAX_NAME_CHARS);
    if (isRecord(chunk.usage)) this.usage = chunk.usage;
    const choices = chunk.choices ?? [];
    if (!Array.isArray(choices)) throw malformed('a stream chunk has no choices array');
    let text = '';
    let thinking = '';
    for (const choice of choices) {
      if (!isRecord(choice)) throw malformed('a stream choice is not a JSON object');
      if (typeof choice.index === 'number' && choice.index !== 0) continue;
      if (typeof choice.finish_reason === 'string') this.finishReason = choice.finish_reason;
      const delta = choice.delta ?? {};
      if (!isRecord(delta)) throw malformed('a stream choice has a delta that is not a JSON object');
      if (typeof delta.content === 'string') text += delta.content;
      for (const key of ['reasoning_content', 'reasoning'] as const) {
        if (typeof delta[key] === 'string') thinking += delta[key];
      }
      if (delta.tool_calls !== undefined && delta.tool_calls !== null) this.addToolCalls(delta.tool_calls);
    }
    this.text += text;
    this.thinking += thinking;
    this.chars += text.length + thinking.length;
    return { text, thinking };
  }

  private addToolCalls(deltas: unknown): void {
    if (!Array.isArray(deltas)) throw malformed('tool_calls in a delta is not an array');
    for (const delta of deltas) {
      if (!isRecord(delta)) throw malformed('a tool call delta is not a JSON object');
      const fn = isRecord(delta.function) ? delta.function : {};
      const id = typeof delta.id === 'string' && delta.id ? delta.id : undefined;
      const index = typeof delta.index === 'number' ? delta.index : this.calls.length - (id ? 0 : 1);
      let at = this.slotOfIndex.get(index);
      // Some servers number every parallel call 0: a new id at a used index is a new call.
      if (at === undefined || (id !== undefined && this.calls[at]!.id && this.calls[at]!.id !== id)) {
        at = this.calls.push({ id: '', name: '', arguments: '' }) - 1;
        this.slotOfIndex.set(index, at);
      }
      const slot = this.calls[at]!;
      if (id && !slot.id) slot.id = id.slice(0, MAX_NAME_CHARS);
      if (typeof fn.name === 'string' && !slot.name) slot.name = fn.name.slice(0, MAX_NAME_CHARS);
      const args =
        typeof fn.arguments === 'string' ? fn.arguments : isRecord(fn.arguments) ? JSON.stringify(fn.arguments) : '';
      slot.arguments += args;
      this.chars += args.length + (typeof fn.name === 'string' ? fn.name.length : 0);
    }
  }

  /** The stream's token counts: a missing or invalid report is a retryable provider error, never zero (usage-check.ts). */
  private counts(): { prompt: number; completion: number; cached: number } {
    const usage = this.usage;
    if (!usage) throw invalidUsage(PROVIDER, 'the stream sent no usage chunk');
    const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
    return {
      prompt: tokenCount(usage.prompt_tokens, 'usage.prompt_tokens', PROVIDER),
      completion: tokenCount(usage.completion_tokens, 'usage.completion_tokens', PROVIDER),
      cached: optionalTokenCount(details.cached_tokens, 'usage.prompt_tokens_details.cached_tokens', PROVIDER),
    };
  }

  /** Whether the stream said how it ended: a stream cut before its finish reason is retried. */
  get finished(): boolean {
    return this.finishReason !== null;
  }

  /**
   * The answer as a plain-JSON `ModelResponse`. `newId` names tool calls the server sent without an
   * id (or with one already used in this answer): results are matched to calls by id.
   */
  toResponse(requestModel: string, newId: () => string, requestId?: string | null): ModelResponse {
    const content: ContentBlock[] = [];
    if (this.thinking) content.push({ type: 'thinking', thinking: this.thinking });
    if (this.text) content.push({ type: 'text', text: this.text });
    const seen = new Set<string>();
    for (const call of this.calls) {
      if (!call.name) throw malformed('a tool call arrived without a function name');
      const id = call.id && !seen.has(call.id) ? call.id : newId();
      seen.add(id);
      content.push({ type: 'tool_use', id, name: call.name, input: parseArguments(call.arguments) });
    }
    let stopReason: StopReason | null = this.finishReason === null ? null : (FINISH_REASONS[this.finishReason] ?? null);
    // Some servers end a turn that called tools with 'stop': the calls must still run (and be answered).
    if (this.calls.length > 0 && (stopReason === 'end_turn' || stopReason === null)) stopReason = 'tool_use';
    const usage = this.counts();
    const cached = Math.min(usage.cached, usage.prompt);
    const response: ModelResponse = {
      id: this.id || newId(),
      // Prefixed like the run's model id, so prices and limits of `openai:` models are found for it.
      model: `openai:${this.model || serverModelName(requestModel)}`,
      content,
      stopReason,
      usage: {
        inputTokens: usage.prompt - cached,
        outputTokens: usage.completion,
        cacheReadInputTokens: cached,
        cacheCreationInputTokens: 0,
      },
    };
    if (requestId) response.requestId = requestId;
    return response;
  }
}

/** `{}` for no arguments; the parsed value when valid JSON; else the raw string (see the module comment). */
export function parseArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function malformed(what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: ErrorTypes.MalformedResponse,
    message: `OpenAI-compatible API returned a malformed response: ${what}`,
    nonRetryable: false,
  });
}
