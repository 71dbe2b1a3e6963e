/**
 * Wire types for the conversation. They mirror the Anthropic Messages API shapes as plain JSON,
 * because only plain JSON may cross an activity boundary. Blocks the loop does not inspect
 * (thinking, redacted thinking, server tool blocks) pass through untouched.
 */

export interface TextBlock {
  type: 'text';
  text: string;
  [key: string]: unknown;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  [key: string]: unknown;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** Any other block the model returns (thinking, redacted_thinking, server tools, …), kept verbatim. */
export interface OtherBlock {
  type: string;
  [key: string]: unknown;
}

export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock | OtherBlock;

export interface Message {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

export type StopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** A tool as the model sees it: name, description and JSON Schema (from `z.toJSONSchema`). */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** `tool`: the model must call the named tool (not every model allows it). */
export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'any' } | { type: 'tool'; name: string };

/** What a model provider receives. Tool definitions are resolved on the worker from `toolNames`. */
export interface ModelRequest {
  model: string;
  system?: string;
  messages: Message[];
  tools: ToolSpec[];
  toolChoice?: ToolChoice;
  maxTokens: number;
  /** The final answer must be JSON valid against this JSON Schema: providers ask for structured output. */
  outputSchema?: Record<string, unknown>;
}

/** What a model provider returns: the assistant turn exactly as the API produced it. */
export interface ModelResponse {
  id: string;
  model: string;
  content: ContentBlock[];
  stopReason: StopReason | null;
  usage: Usage;
  requestId?: string;
  /** The call waited this long for its provider key's rate budget first (src/admission/); absent when it did not. */
  rateLimited?: { provider: string; waitMs: number };
}

export const ZERO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  };
}

export function isToolUse(block: ContentBlock): block is ToolUseBlock {
  return block.type === 'tool_use';
}

/** The text of a turn: its text blocks joined with a newline, trimmed (how the loop reads a turn's answer). */
export function textOf(content: ContentBlock[]): string {
  return rawTextOf(content).trim();
}

/** The text blocks joined with a newline, untrimmed: an answer cut at max_tokens continues exactly here. */
export function rawTextOf(content: ContentBlock[]): string {
  return content
    .filter((b): b is TextBlock => b.type === 'text' && typeof (b as TextBlock).text === 'string')
    .map((b) => b.text)
    .join('\n');
}

/** The thinking blocks' text joined with a newline (redacted thinking has none). */
export function thinkingOf(content: ContentBlock[]): string {
  return content
    .filter((b) => b.type === 'thinking' && typeof (b as { thinking?: unknown }).thinking === 'string')
    .map((b) => (b as unknown as { thinking: string }).thinking)
    .join('\n')
    .trim();
}
