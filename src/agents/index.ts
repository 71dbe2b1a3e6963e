/**
 * Agent definitions: named subagents in Claude Code's agent file format, from the operator's
 * worker-wide folder and the run's workspace. See docs/subagents.md#defining-agents.
 */
export { AGENTS_DIR_ENV_VAR, WORKSPACE_AGENT_DIRS, loadAgents, workerAgentsDir, type LoadAgentsOptions } from './load';
export { parseAgentFile, type ParsedAgent } from './parse';
export * from './limits';
