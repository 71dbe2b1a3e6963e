import { Context } from '@temporalio/activity';
import type { ModelResolver } from '../src/models/types';
import type { Message, ModelResponse, ToolChoice } from '../src/shared/messages';
import type { ToolRegistry, ToolResult } from '../src/tools';

export interface NaiveCallModelInput {
  model: string;
  /** The whole conversation, every call: what the naive baseline records in history each time. */
  messages: Message[];
  toolChoice?: ToolChoice;
  maxTokens: number;
}

export interface NaiveRunToolInput {
  toolUseId: string;
  name: string;
  input: unknown;
}

export interface NaiveActivityDeps {
  models: ModelResolver;
  tools: ToolRegistry;
  workspace: string;
}

/**
 * Activities of the naive baseline, as public integrations write them: the model activity takes the
 * full message list, the tool activity runs one call. Same model and tool registry as ours.
 */
export function createNaiveActivities(deps: NaiveActivityDeps) {
  async function naiveCallModel(input: NaiveCallModelInput): Promise<ModelResponse> {
    const ctx = Context.current();
    return deps.models(input.model).call(
      {
        model: input.model,
        messages: input.messages,
        tools: deps.tools.specs(),
        ...(input.toolChoice ? { toolChoice: input.toolChoice } : {}),
        maxTokens: input.maxTokens,
      },
      { signal: ctx.cancellationSignal, heartbeat: (d) => ctx.heartbeat(d) },
    );
  }

  async function naiveRunTool(input: NaiveRunToolInput): Promise<ToolResult> {
    const ctx = Context.current();
    return deps.tools.run(input.name, input.input, {
      workspace: deps.workspace,
      signal: ctx.cancellationSignal,
      heartbeat: (d) => ctx.heartbeat(d),
      toolUseId: input.toolUseId,
    });
  }

  return { naiveCallModel, naiveRunTool };
}

export type NaiveActivities = ReturnType<typeof createNaiveActivities>;
