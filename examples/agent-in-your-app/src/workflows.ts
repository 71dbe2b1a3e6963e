import { executeChild, workflowInfo } from '@temporalio/workflow';
import { agentWorkflow, type AgentRunResult } from 'durable-agent/workflow';

// The worker runs the agent's workflow next to the application's own.
export { agentWorkflow };

export interface ReviewResult {
  /** The agent's answer. */
  answer: string;
  exitReason: AgentRunResult['exitReason'];
  iterations: number;
}

/** A workflow of the application's own that hands a step to the agent, as a child workflow, and uses its typed result. */
export async function reviewWorkflow(text: string, model?: string): Promise<ReviewResult> {
  const result = await executeChild(agentWorkflow, {
    workflowId: `${workflowInfo().workflowId}-agent`,
    args: [
      {
        prompt: `How many words does this text have? Use the count_words tool.\n\n${text}`,
        ...(model ? { model } : {}),
        // No `tools`: the model is offered every tool the worker has, count_words included.
        maxIterations: 4,
      },
    ],
  });
  return { answer: result.finalText, exitReason: result.exitReason, iterations: result.iterations };
}
