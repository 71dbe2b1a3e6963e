/**
 * Wire types of the `assembleContext` activity: what the model is told at the start of a run (the
 * system prompt) and where each part came from. Plain JSON only: the workflow calls the activity
 * once at run start, Temporal records the result, and replay reads it back from history.
 */

/** Input of `assembleContext`. */
export interface AssembleContextInput {
  /** The run's workspace; the worker's default workspace when omitted. */
  workspace?: string;
  /**
   * The tools the model is offered, in order (the `done` tool included when the run offers it).
   * Omitted: every tool of the worker that is not opt-in. Names the worker does not know are left
   * out with a warning.
   */
  toolNames?: string[];
  /**
   * Tools offered on top of `toolNames` (or of the worker's default tools when `toolNames` is
   * omitted): the opt-in `done` tool of a run with `requireDoneTool`, as `callModel` takes it.
   */
  extraToolNames?: string[];
  /** When the run started, ISO 8601, from workflow time (never the worker's clock, so replay agrees). */
  startedAt: string;
  /** The operator's text (`--system`, `systemPrompt` in the run input). */
  systemPrompt?: string;
  /** `systemPrompt` replaces the whole assembly instead of being appended to it (`--system-replace`). */
  systemReplace?: boolean;
  /** The run's model id (named in the prompt's environment section). */
  model: string;
  /** How tools are called: the API's native tool use (default) or the text protocol. */
  toolProtocol?: 'native' | 'xml';
  /** Commands may use the network (`network: true` in the run input); the prompt says which. */
  network?: boolean;
}

/** Where one part of the system prompt came from. */
export type ContextSourceKind = 'default' | 'instructions' | 'memory' | 'skills' | 'user';

export interface ContextSource {
  kind: ContextSourceKind;
  /** The section's heading in the prompt (`Identity`, `Project instructions`, `Environment`, …). */
  title: string;
  /**
   * The file read, relative to the workspace (`AGENTS.md`, `.claude/skills/x/SKILL.md`); absolute
   * for an instruction file above the workspace. Absent for the built-in default and user text.
   */
  path?: string;
  /** UTF-8 bytes of this part as it stands in `system` (after any cut). */
  bytes: number;
  /** The part was cut to fit its cap; the prompt says so where it was cut. */
  truncated?: boolean;
}

/** A skill the model is told about; it reads the body with read_file when it needs it. */
export interface ContextSkill {
  name: string;
  description: string;
  /** The skill's SKILL.md, relative to the workspace. */
  path: string;
}

/** Result of `assembleContext`: bounded (the system prompt ≤ MAX_SYSTEM_PROMPT_BYTES, lists capped). */
export interface AssembledContext {
  /** The system prompt for every model call of the run. */
  system: string;
  /** The parts of `system`, in order. */
  sources: ContextSource[];
  /** The skills listed in `system`. */
  skills: ContextSkill[];
  /** What was skipped or cut and why (a bad SKILL.md, a refused symlink, a cap), for the run's details. */
  warnings: string[];
}
