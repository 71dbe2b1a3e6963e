/**
 * What the model is told at the start of a run: the default system prompt, the workspace's
 * instruction files, memory and skills, and the operator's text. See docs/context.md.
 */
export { assembleContext, type AssembleDeps } from './assemble';
export type { SandboxMode } from './default-prompt';
export { parseSkillFrontmatter, SKILL_ROOTS } from './skills';
export { INSTRUCTION_FILE_NAMES, instructionFolders } from './instructions';
export * from './limits';
