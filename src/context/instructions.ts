import * as path from 'node:path';
import { MAX_INSTRUCTION_DEPTH, MAX_INSTRUCTION_FILE_BYTES, MAX_INSTRUCTIONS_TOTAL_BYTES } from './limits';
import { bytesText, markCut, utf8Length } from './text';
import { exists, readCapped } from './workspace-files';

/**
 * Instruction files: `AGENTS.md` (the cross-tool convention) or, where a folder has none, `CLAUDE.md`
 * (its common alias). Searched in the workspace and in the folders above it up to the repository
 * root (the nearest folder holding `.git`); when no folder on the way up holds `.git`, only the
 * workspace itself is searched, so a stray `/tmp/AGENTS.md` written by anyone on the machine is never
 * read. Nearest first: the workspace's file comes first in the prompt and gets the byte budget first.
 *
 * Each file is read through safe-fs with its own folder as the root: a symlink is followed only while
 * it stays inside that folder (an `AGENTS.md` linking to `/etc/passwd` is refused, not read).
 */

export const INSTRUCTION_FILE_NAMES = ['AGENTS.md', 'CLAUDE.md'] as const;

export interface InstructionFile {
  /** Relative to the workspace for its own files, absolute above it. */
  path: string;
  /** The text as it goes into the prompt (cut and marked when over its cap). */
  text: string;
  truncated: boolean;
}

/** The folders searched, nearest first: the workspace, then its parents up to the one holding `.git`. */
export async function instructionFolders(realWorkspace: string): Promise<string[]> {
  const chain: string[] = [];
  for (let dir = realWorkspace; chain.length < MAX_INSTRUCTION_DEPTH; dir = path.dirname(dir)) {
    chain.push(dir);
    if (await exists(dir, '.git')) return chain;
    if (path.dirname(dir) === dir) break;
  }
  return [realWorkspace];
}

function shownPath(realWorkspace: string, dir: string, name: string): string {
  return dir === realWorkspace ? name : path.join(dir, name);
}

/** The instruction files to put in the prompt, nearest first, within their caps; `warn` hears what was skipped. */
export async function readInstructions(
  realWorkspace: string,
  warn: (text: string) => void,
): Promise<InstructionFile[]> {
  const files: InstructionFile[] = [];
  let budget = MAX_INSTRUCTIONS_TOTAL_BYTES;
  for (const dir of await instructionFolders(realWorkspace)) {
    let chosen: { name: string; read: Extract<Awaited<ReturnType<typeof readCapped>>, { kind: 'ok' }> } | undefined;
    for (const name of INSTRUCTION_FILE_NAMES) {
      const shown = shownPath(realWorkspace, dir, name);
      const cap = Math.min(MAX_INSTRUCTION_FILE_BYTES, budget);
      const read = await readCapped(dir, name, Math.max(cap, 1));
      if (read.kind === 'missing') continue;
      if (read.kind === 'refused') {
        warn(`${shown} not read: ${read.reason}`);
        continue;
      }
      if (!chosen) {
        chosen = { name, read };
        continue;
      }
      // Both names in one folder: AGENTS.md wins; a CLAUDE.md that is a copy or link of it is no news.
      if (read.text !== chosen.read.text || read.fileBytes !== chosen.read.fileBytes)
        warn(`${shown} not read: ${chosen.name} in the same folder is used instead`);
    }
    if (!chosen) continue;
    const shown = shownPath(realWorkspace, dir, chosen.name);
    if (budget <= 0) {
      warn(`${shown} not read: the instruction files before it used the ${bytesText(MAX_INSTRUCTIONS_TOTAL_BYTES)}`);
      continue;
    }
    const { read } = chosen;
    let text = read.text.trimEnd();
    if (read.truncated) {
      const where = dir === realWorkspace ? ' (read the rest with read_file)' : '';
      text = markCut(text, `${shown} is ${bytesText(read.fileBytes)}; only the start is shown${where}`);
      warn(`${shown} cut to its first ${bytesText(utf8Length(read.text))} of ${bytesText(read.fileBytes)}`);
    }
    budget -= utf8Length(read.text);
    files.push({ path: shown, text, truncated: read.truncated });
  }
  return files;
}
