import { MAX_SOUL_BYTES, MAX_TOOL_NOTES_BYTES } from './limits';
import { bytesText, markCut } from './text';
import { readCapped, type TopNames } from './workspace-files';

/**
 * The workspace's own layer files, read from its root like MEMORY.md (docs/context.md):
 * `SOUL.md`, who the agent is in this workspace, read before AGENTS.md (the system layer is
 * SOUL.md + AGENTS.md), and `TOOLS.md`, notes on the tools, shown in the tools part of the prompt.
 */
export const LAYER_FILES = {
  soul: { name: 'SOUL.md', title: 'Soul (SOUL.md)', maxBytes: MAX_SOUL_BYTES },
  tools: { name: 'TOOLS.md', title: 'Workspace notes on the tools (TOOLS.md)', maxBytes: MAX_TOOL_NOTES_BYTES },
} as const;

export interface LayerFile {
  path: string;
  title: string;
  text: string;
  truncated: boolean;
}

/**
 * One layer file, through the same safe reads and ownership rules as every context file: missing
 * or blank gives nothing; refused (a link out of the workspace, a hard link, another user's file,
 * a binary file) gives a warning and nothing; over its cap, its start, marked and warned about.
 * `top`: the workspace's top names, when listed (workspace-files.ts, `listTop`).
 */
export async function readLayerFile(
  workspace: string,
  which: keyof typeof LAYER_FILES,
  owners: readonly number[] | undefined,
  warn: (text: string) => void,
  top?: TopNames,
): Promise<LayerFile | undefined> {
  const { name, title, maxBytes } = LAYER_FILES[which];
  const read = await readCapped(workspace, name, maxBytes, owners, top);
  if (read.kind === 'refused') warn(`${name} not read: ${read.reason}`);
  if (read.kind !== 'ok' || !read.text.trim()) return undefined;
  if (!read.truncated) return { path: name, title, text: read.text.trimEnd(), truncated: false };
  warn(`${name} cut to its first ${bytesText(maxBytes)} of ${bytesText(read.fileBytes)}`);
  const note = `${name} is ${bytesText(read.fileBytes)}; only the start is shown (read the rest with read_file)`;
  return { path: name, title, text: markCut(read.text, note), truncated: true };
}
