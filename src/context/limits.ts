import { MAX_SYSTEM_PROMPT_BYTES } from '../shared/constants';

/**
 * Caps of the assembled system prompt. The prompt travels with every model call and its total is
 * bounded by MAX_SYSTEM_PROMPT_BYTES (the model call's payload budget in constants.ts); each part
 * has its own cap so that one large file cannot crowd out the others.
 */

/** The whole system prompt, `--system` text included. */
export const MAX_CONTEXT_BYTES = MAX_SYSTEM_PROMPT_BYTES;
/** One AGENTS.md / CLAUDE.md: a long file is cut, with a note saying where to read the rest. */
export const MAX_INSTRUCTION_FILE_BYTES = 32 * 1024;
/** All instruction files together; the nearest file is read first and gets the budget first. */
export const MAX_INSTRUCTIONS_TOTAL_BYTES = 32 * 1024;
/** Directories searched for instruction files above the workspace (up to the `.git` boundary). */
export const MAX_INSTRUCTION_DEPTH = 32;
/** SOUL.md (read before the instruction files) and TOOLS.md (in the tools part), each. */
export const MAX_SOUL_BYTES = 8 * 1024;
export const MAX_TOOL_NOTES_BYTES = 8 * 1024;
/** MEMORY.md as shown at start. */
export const MAX_MEMORY_BYTES = 8 * 1024;
/** Skills listed in the prompt. */
export const MAX_SKILLS = 64;
/** The skills section (names, descriptions, paths). */
export const MAX_SKILLS_SECTION_BYTES = 12 * 1024;
/** Bytes of a SKILL.md read to find its frontmatter; the frontmatter must end within them. */
export const MAX_SKILL_HEADER_BYTES = 16 * 1024;
/** Sub-folders of one skills folder looked at (a folder of 100,000 entries is not walked whole). */
export const MAX_SKILL_DIR_ENTRIES = 200;
/** Agent Skills limits on the frontmatter (agentskills.io specification). */
export const MAX_SKILL_NAME_CHARS = 64;
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;
/** One tool's line in the tools section. */
export const MAX_TOOL_LINE_CHARS = 300;
/** The tools section (a worker may register many custom tools). */
export const MAX_TOOLS_SECTION_BYTES = 8 * 1024;
/** Warnings kept in the result, and the length of each. */
export const MAX_WARNINGS = 32;
export const MAX_WARNING_CHARS = 400;
