import { MAX_FAIRNESS_KEY_BYTES, type AgentRunInput } from '../../shared/run/input';
import { utf8Length } from '../../shared/bounds';
import { hashString } from '../../shared/conversation';
import type { AgentDefinition } from '../../shared/subagents';
import type { ParsedInput } from '../run/settings';
import type { SubagentPlan } from './plan';
import type { TaskCall } from './task-tool';

/**
 * A subagent's run input. It inherits its parent's workspace, model, limits, network setting,
 * priority and fairness key (the parent's id when it names none) and approval policy exactly (never looser: the definition cannot change them), its tools are its
 * parent's cut to the definition's list, and its budget is what the tree has left.
 */
export function childInput(p: {
  parent: ParsedInput;
  plan: SubagentPlan;
  /** The workspace's real path recorded at the parent's start. */
  workspace: string | undefined;
  model: string;
  call: TaskCall;
  definition?: AgentDefinition;
  remainingBudgetUsd?: number;
  /** The parent's `task` call: the tracing interceptor puts it on the call's span. */
  toolUseId?: string;
  /** The parent's workflow id: the children's fairness key when the parent names none (one share for the tree). */
  parentWorkflowId?: string;
}): AgentRunInput {
  const { parent, plan, definition } = p;
  // A parent without a tool list has the worker's default tools, and so has a child without one
  // (naming them would name tools a worker with its own registry may lack); `task` is then offered by
  // the depth limit alone. A definition's list is cut to the parent's tools (the built-in ones when
  // the parent has no list).
  const tools = definition?.tools
    ? plan.tools.filter((t) => definition.tools!.includes(t))
    : parent.tools
      ? plan.tools
      : undefined;
  const model = definition?.model && definition.model !== 'inherit' ? definition.model : p.model;
  return {
    prompt: p.call.prompt,
    model,
    ...(definition ? { systemPrompt: definition.prompt } : {}),
    ...(p.workspace ? { workspace: p.workspace } : parent.workspace ? { workspace: parent.workspace } : {}),
    ...(tools ? { tools } : {}),
    ...(parent.maxIterations !== undefined ? { maxIterations: parent.maxIterations } : {}),
    ...(parent.maxTokens !== undefined ? { maxTokens: parent.maxTokens } : {}),
    ...(p.remainingBudgetUsd !== undefined ? { maxBudgetUsd: p.remainingBudgetUsd } : {}),
    ...(parent.network ? { network: true } : {}),
    ...(parent.commandPolicy ? { commandPolicy: parent.commandPolicy } : {}),
    ...(parent.permissions ? { permissions: parent.permissions } : {}),
    ...(parent.approveMutating ? { approveMutating: true } : {}),
    ...(parent.approvalTimeoutSeconds !== undefined ? { approvalTimeoutSeconds: parent.approvalTimeoutSeconds } : {}),
    ...(parent.timeouts ? { timeouts: parent.timeouts } : {}),
    ...(parent.mcpServers ? { mcpServers: parent.mcpServers } : {}),
    ...(parent.contextWindowTokens !== undefined ? { contextWindowTokens: parent.contextWindowTokens } : {}),
    ...(parent.priority !== undefined ? { priority: parent.priority } : {}),
    ...(parent.fairnessKey !== undefined
      ? { fairnessKey: parent.fairnessKey }
      : p.parentWorkflowId
        ? { fairnessKey: fairnessKeyOf(p.parentWorkflowId) }
        : {}),
    maxSubagentDepth: plan.maxDepth,
    subagent: {
      depth: plan.depth + 1,
      ...(definition ? { agent: definition.name } : {}),
      ...(p.toolUseId ? { toolUseId: p.toolUseId } : {}),
    },
  };
}

/** A workflow id as a fairness key: itself when it fits Temporal's 64 bytes, else its hash. */
export function fairnessKeyOf(workflowId: string): string {
  return utf8Length(workflowId) <= MAX_FAIRNESS_KEY_BYTES ? workflowId : `run-${hashString(workflowId)}`;
}

/** What the Web UI shows for the child: its agent and its task. */
export function childSummary(call: TaskCall, agent: string | undefined): string {
  const label = call.description ?? call.prompt.split('\n', 1)[0]!.trim();
  return `subagent ${agent ?? 'general'}: ${label}`.slice(0, 200);
}

export function childDetails(p: {
  parentWorkflowId: string;
  depth: number;
  agent?: string;
  tools: readonly string[] | undefined;
  maxBudgetUsd?: number;
  prompt: string;
}): string {
  return [
    `**subagent** of ${p.parentWorkflowId} · depth ${p.depth}`,
    `agent: ${p.agent ?? 'general-purpose'}`,
    `tools: ${p.tools ? (p.tools.length ? p.tools.join(', ') : '(none)') : "its parent's (the worker's default tools)"}`,
    ...(p.maxBudgetUsd !== undefined ? [`budget left: ${p.maxBudgetUsd.toFixed(4)} USD`] : []),
    `task: ${p.prompt.slice(0, 500)}`,
  ].join('\n');
}
