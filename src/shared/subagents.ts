/**
 * Subagents: the `task` tool runs a child `agentWorkflow` (docs/subagents.md). These are the shapes
 * the workflow, the worker (agent definitions) and the CLI (nested progress, transcript) agree on.
 */

/** The built-in tool that starts a subagent. Input: `{ prompt, description?, agent? }`. */
export const TASK_TOOL_NAME = 'task';

/** How deep a tree may grow: a run at this depth is not offered `task`. The top-level run is depth 0. */
export const DEFAULT_MAX_SUBAGENT_DEPTH = 2;

/** Where an agent definition came from; workspace definitions are model-writable and untrusted. */
export type AgentDefinitionSource = 'input' | 'operator' | 'workspace';

/**
 * A named subagent: Claude Code's agent file format (frontmatter `name`, `description`, `tools`,
 * `model`; the body is the system prompt), or the run input's `agents` entry.
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /** The subagent's system prompt. */
  prompt: string;
  /** Tool names it may use; absent: its parent's tools. Never more than its parent's. */
  tools?: string[];
  /** Model id; absent or `inherit`: its parent's model. */
  model?: string;
  source: AgentDefinitionSource;
  /** File it was read from (operator and workspace definitions). */
  path?: string;
}

/** Activity `loadAgentDefinitions` input: the run's workspace (real path) and the input's own definitions. */
export interface LoadAgentDefinitionsInput {
  workspace?: string;
}

export interface LoadAgentDefinitionsResult {
  agents: AgentDefinition[];
  /** Files skipped and why (bad frontmatter, too large, refused path), said once to the operator. */
  warnings: string[];
}

/** A subagent as the parent's `state` query lists it while it runs. */
export interface SubagentSummary {
  workflowId: string;
  toolUseId: string;
  agent?: string;
  description?: string;
}

/** A pending approval that belongs to a descendant run: `approve <parent> <toolUseId>` decides it. */
export interface SubagentApprovalOrigin {
  workflowId: string;
  agent?: string;
}
