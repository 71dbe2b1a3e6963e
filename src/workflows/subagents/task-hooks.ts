import { toolResultBlock } from '../../shared/conversation';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages';
import type { Permission } from '../../shared/run';
import type { Hooks } from '../calls/hooks';

/**
 * What stands before a `task` call as before every tool call (the run's tool dispatch passes it):
 * the PreToolUse / PostToolUse hooks, and the approval an `ask` calls for.
 */
export interface TaskGate {
  hooks?: Hooks;
  approve?(call: ToolUseBlock): Promise<{ approved: boolean; reason?: string }>;
}

/** The call as the hooks left it (its input may be rewritten), or why it is not run. */
export type TaskAdmission = { refused: string } | { call: ToolUseBlock; context?: string };

/**
 * PreToolUse hooks for `task`: a hook may deny the call, rewrite its input (the subagent then gets
 * the rewritten prompt), add context to its result, or ask for an operator's approval, which an
 * `ask` permission asks for too.
 */
export async function admitTask(
  toolUse: ToolUseBlock,
  gate: TaskGate,
  /** The run's `permissions.task` (only an explicit one: `approveMutating` does not ask for task calls). */
  permission: Permission | undefined,
): Promise<TaskAdmission> {
  const pre = gate.hooks ? await gate.hooks.beforeTool(toolUse) : undefined;
  if (pre?.kind === 'deny') return { refused: `Error: not run: ${pre.reason}` };
  const call: ToolUseBlock = pre ? { ...toolUse, input: pre.input } : toolUse;
  if (((permission === 'ask' && !pre?.allowed) || pre?.ask) && gate.approve) {
    const decision = await gate.approve(call);
    if (!decision.approved) {
      return {
        refused:
          `Error: the operator denied this task call${decision.reason ? `: ${decision.reason}` : ''}. ` +
          'It was not run. Do not repeat it unchanged; adjust your approach or ask the user.',
      };
    }
  }
  return { call, ...(pre?.kind === 'run' && pre.context ? { context: pre.context } : {}) };
}

/** PostToolUse / PostToolUseFailure hooks see the subagent's answer; their feedback joins the result. */
export async function afterTask(
  gate: TaskGate,
  admitted: { call: ToolUseBlock; context?: string },
  block: ToolResultBlock,
): Promise<ToolResultBlock> {
  const isError = block.is_error === true;
  const notes = [
    ...(admitted.context ? [`[hook context] ${admitted.context}`] : []),
    ...(gate.hooks ? await gate.hooks.afterTool(admitted.call, admitted.call.input, block.content, isError) : []),
  ];
  return notes.length ? toolResultBlock(block.tool_use_id, `${block.content}\n\n${notes.join('\n')}`, isError) : block;
}
