import { ApplicationFailure, ChildWorkflowFailure } from '@temporalio/workflow';
import { cutBytes, cutChars } from '../../shared/bounds';
import { toolResultBlock } from '../../shared/conversation';
import type { ToolResultBlock } from '../../shared/messages';
import type { AgentRunResult } from '../../shared/run';
import { MAX_TASK_RESULT_BYTES } from '../../shared/subagents';
import { spendOf } from './spend';

/** A child's answer as the parent's tool result: its structured output when it has one, else its text, bounded. */
export function answerBlock(toolUseId: string, workflowId: string, result: AgentRunResult): ToolResultBlock {
  if (result.exitReason !== 'completed') {
    const why = result.error ? `: ${cutChars(result.error.message, 2_000)}` : '';
    const text = result.finalText ? `\nIts last text:\n${cutBytes(result.finalText, 4_000)}` : '';
    return toolResultBlock(toolUseId, `Error: subagent ${workflowId} ended '${result.exitReason}'${why}${text}`, true);
  }
  const body = result.output !== undefined ? JSON.stringify(result.output) : result.finalText;
  return toolResultBlock(
    toolUseId,
    cutBytes(
      body || '(the subagent gave no text)',
      MAX_TASK_RESULT_BYTES,
      `\n[cut: the whole answer is in ${workflowId}'s result]`,
    ),
    false,
  );
}

/** The result a failed child carried in its failure's details (a run that ends `failed`), if any. */
export function resultOf(err: unknown): AgentRunResult | undefined {
  if (!(err instanceof ChildWorkflowFailure) || !(err.cause instanceof ApplicationFailure)) return undefined;
  const details = err.cause.details?.[0] as Partial<AgentRunResult> | undefined;
  const spend = spendOf(details);
  if (!details || !spend || typeof details.exitReason !== 'string') return undefined;
  return {
    exitReason: details.exitReason,
    finalText: typeof details.finalText === 'string' ? details.finalText : '',
    iterations: typeof details.iterations === 'number' ? details.iterations : 0,
    usage: spend.usage,
    costUsd: spend.costUsd,
    model: typeof details.model === 'string' ? details.model : '',
    ...(details.error && typeof details.error.message === 'string' ? { error: details.error } : {}),
  };
}
