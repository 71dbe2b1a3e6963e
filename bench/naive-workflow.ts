import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import {
  MODEL_RETRY,
  MODEL_START_TO_CLOSE_TIMEOUT,
  SUMMARY_INSTRUCTION,
  TOOL_RETRY,
  TOOL_START_TO_CLOSE_TIMEOUT,
} from '../src/shared/constants';
import type { Message, ModelResponse, ToolResultBlock, ToolUseBlock } from '../src/shared/messages';
import type { NaiveActivities } from './naive-activities';

/** Where a kind of call runs: a regular activity, or a local activity (no task queue round trip). */
export type CallPlacement = 'activity' | 'local';

export interface NaiveRunInput {
  prompt: string;
  model: string;
  maxIterations: number;
  maxTokens?: number;
  modelCalls?: CallPlacement;
  toolCalls?: CallPlacement;
}

export interface NaiveRunResult {
  exitReason: 'completed' | 'max_iterations';
  iterations: number;
  finalText: string;
}

const modelOptions = { startToCloseTimeout: MODEL_START_TO_CLOSE_TIMEOUT, retry: MODEL_RETRY } as const;
const toolOptions = { startToCloseTimeout: TOOL_START_TO_CLOSE_TIMEOUT, retry: TOOL_RETRY } as const;
const remote = {
  model: proxyActivities<NaiveActivities>(modelOptions),
  tool: proxyActivities<NaiveActivities>(toolOptions),
};
const local = {
  model: proxyLocalActivities<NaiveActivities>(modelOptions),
  tool: proxyLocalActivities<NaiveActivities>(toolOptions),
};

/**
 * The naive baseline: the agent loop as public Temporal AI integrations write it. The conversation
 * lives in workflow state and the whole message list goes to every model activity, so each message
 * is recorded in history again by every later call: history grows quadratically.
 */
export async function naiveAgentWorkflow(input: NaiveRunInput): Promise<NaiveRunResult> {
  const callModel = (input.modelCalls === 'local' ? local : remote).model.naiveCallModel;
  const runTool = (input.toolCalls === 'local' ? local : remote).tool.naiveRunTool;
  const maxTokens = input.maxTokens ?? 8192;
  const messages: Message[] = [{ role: 'user', content: input.prompt }];

  for (let iteration = 0; iteration < input.maxIterations;) {
    const response: ModelResponse = await callModel({ model: input.model, messages, maxTokens });
    iteration += 1;
    messages.push({ role: 'assistant', content: response.content });
    const toolUses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (response.stopReason !== 'tool_use' || toolUses.length === 0) {
      return { exitReason: 'completed', iterations: iteration, finalText: textOf(response) };
    }
    const results = await Promise.all(
      toolUses.map(async (t): Promise<ToolResultBlock> => {
        const { content, isError } = await runTool({ toolUseId: t.id, name: t.name, input: t.input });
        return { type: 'tool_result', tool_use_id: t.id, content, ...(isError ? { is_error: true } : {}) };
      }),
    );
    messages.push({ role: 'user', content: results });
  }

  const summary = await callModel({
    model: input.model,
    messages: [...messages, { role: 'user', content: SUMMARY_INSTRUCTION }],
    toolChoice: { type: 'none' },
    maxTokens,
  });
  return { exitReason: 'max_iterations', iterations: input.maxIterations, finalText: textOf(summary) };
}

function textOf(response: ModelResponse): string {
  return response.content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
}
