import { ApplicationFailure } from '@temporalio/common';
import type { CallModelInput } from '../shared/activity-io';
import { ErrorTypes } from '../shared/constants';
import type { Message, ModelRequest, ToolChoice, ToolSpec } from '../shared/messages';
import { renderToolDefinitions } from '../shared/text-protocol';
import { wellFormedJson } from '../shared/well-formed';
import type { ConversationCache } from './conversation-cache';

/**
 * The request a model call sends, from the activity's input: the system prompt (sent, or the copy
 * kept with the cached conversation), the tools, and how the model calls them. Under the text
 * protocol (`toolProtocol: 'xml'`) the tools are described in the system prompt instead of the
 * API's `tools`, so a model without native tool calling can use them (docs/models.md, the text tool protocol).
 *
 * This is where every provider's request is built, so every string that leaves for a provider is
 * made well-formed here (a lone UTF-16 surrogate becomes U+FFFD, `src/shared/well-formed.ts`): text a
 * tool, a file, a hook, an MCP server or a client produced is data, and one broken emoji in it must
 * not make the provider refuse the request and fail the run (docs/limits.md).
 */
export function modelRequest(
  input: Omit<CallModelInput, 'toolChoice'>,
  messages: Message[],
  conversations: ConversationCache,
  tools: ToolSpec[],
  toolChoice: ToolChoice | undefined,
): { request: ModelRequest; system: string | undefined } {
  const system = conversations.system(input.conversation, input.system, input.systemHash);
  if (input.toolProtocol === 'xml') {
    const definitions = renderToolDefinitions(
      tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema })),
    );
    return {
      request: wellFormedJson<ModelRequest>({
        model: input.model,
        system: system ? `${system}\n\n${definitions}` : definitions,
        messages,
        tools: [],
        maxTokens: input.maxTokens,
      }),
      system,
    };
  }
  if (toolChoice?.type === 'tool' && !tools.some((t) => t.name === toolChoice.name)) {
    throw ApplicationFailure.nonRetryable(
      `toolChoice names tool '${toolChoice.name}', which this run is not offered; its tools: ` +
        (tools.map((t) => t.name).join(', ') || 'none'),
      ErrorTypes.InvalidInput,
    );
  }
  return {
    request: wellFormedJson<ModelRequest>({
      model: input.model,
      ...(system !== undefined ? { system } : {}),
      messages,
      tools,
      ...(toolChoice ? { toolChoice } : {}),
      maxTokens: input.maxTokens,
      ...(input.outputSchema ? { outputSchema: input.outputSchema } : {}),
    }),
    system,
  };
}
