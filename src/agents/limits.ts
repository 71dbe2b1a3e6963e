/**
 * Bounds of agent definitions. Their result is recorded in the run's history (the activity's result)
 * and each prompt becomes a subagent's system prompt, so sizes and counts are capped: a folder of
 * 100,000 files or a 1 GiB file is read no further than these.
 */

/** One agent file, frontmatter and body; a larger file is skipped (a cut system prompt would mislead). */
export const MAX_AGENT_FILE_BYTES = 32 * 1024;
/** Entries of one agents folder looked at. */
export const MAX_AGENT_DIR_ENTRIES = 200;
/** Agents in the result, operator and workspace together. */
export const MAX_AGENTS = 64;
/** All agents' prompts together, in UTF-8 bytes (the result is recorded in history). */
export const MAX_AGENT_PROMPTS_TOTAL_BYTES = 256 * 1024;
/** Claude Code's limits: a name of lowercase letters, digits and hyphens; a one-line description. */
export { MAX_AGENT_DESCRIPTION_CHARS, MAX_AGENT_NAME_CHARS } from '../shared/subagents';
/** Tools one agent may list, and the length of a tool name. */
export const MAX_AGENT_TOOLS = 64;
export const MAX_AGENT_TOOL_NAME_CHARS = 128;
export const MAX_AGENT_MODEL_CHARS = 128;
/** Warnings kept in the result, and the length of each. */
export const MAX_AGENT_WARNINGS = 32;
export const MAX_AGENT_WARNING_CHARS = 400;
