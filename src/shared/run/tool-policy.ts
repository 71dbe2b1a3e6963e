/** Names of the built-in tools. The registry on the worker must provide exactly these. */
export const BUILTIN_TOOL_NAMES = ['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep'] as const;

/** Side-effect class of each built-in tool, known to the workflow for approval policies. Others count as mutating. */
export const BUILTIN_SIDE_EFFECTS: Readonly<Record<string, 'read_only' | 'mutating'>> = {
  bash: 'mutating',
  read_file: 'read_only',
  write_file: 'mutating',
  edit_file: 'mutating',
  glob: 'read_only',
  grep: 'read_only',
};

/** The tool a run with `requireDoneTool` must call to finish; opt-in, never offered otherwise. */
export const DONE_TOOL_NAME = 'done';

export const PERMISSIONS = ['allow', 'deny', 'ask'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const TOOL_PROTOCOLS = ['native', 'xml'] as const;
export type ToolProtocol = (typeof TOOL_PROTOCOLS)[number];
