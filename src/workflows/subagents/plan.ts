import { BUILTIN_TOOL_NAMES } from '../../shared/run/tool-policy';
import { DEFAULT_MAX_SUBAGENT_DEPTH, TASK_TOOL_NAME, offersTaskTool } from '../../shared/subagents';
import type { ParsedInput } from '../run/settings';

/** Where a run stands in its tree, and whether it may start subagents. */
export interface SubagentPlan {
  /** 0 for a top-level run. */
  depth: number;
  maxDepth: number;
  /** The agent this run runs as, when it is a named subagent. */
  agent?: string;
  /** The model is offered `task` (and the run loads agent definitions). */
  offersTask: boolean;
  /** The tools this run may use, `task` included when offered: what a subagent's tools are cut from. */
  tools: string[];
  /** The input as the worker sees it: `task` is the workflow's own tool, never a worker tool. */
  workerInput: ParsedInput;
}

/**
 * A run offers `task` when it asks for it (`tools` names it, or, without a tool list, it gives
 * `agents` or `maxSubagentDepth`), uses native tool calls, and is above the depth limit. Runs that
 * ask for none of this (every run recorded before subagents) take exactly the path they took before.
 */
export function subagentPlan(input: ParsedInput): SubagentPlan {
  const depth = input.subagent?.depth ?? 0;
  const maxDepth = input.maxSubagentDepth ?? DEFAULT_MAX_SUBAGENT_DEPTH;
  const offersTask = offersTaskTool(input);
  const workerInput = input.tools?.includes(TASK_TOOL_NAME)
    ? { ...input, tools: input.tools.filter((name) => name !== TASK_TOOL_NAME) }
    : input;
  return {
    depth,
    maxDepth,
    ...(input.subagent?.agent !== undefined ? { agent: input.subagent.agent } : {}),
    offersTask,
    tools: [...(workerInput.tools ?? BUILTIN_TOOL_NAMES), ...(offersTask ? [TASK_TOOL_NAME] : [])],
    workerInput,
  };
}
