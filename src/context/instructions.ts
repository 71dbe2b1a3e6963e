import * as path from 'node:path';
import { MAX_INSTRUCTION_DEPTH, MAX_INSTRUCTION_FILE_BYTES, MAX_INSTRUCTIONS_TOTAL_BYTES } from './limits';
import { bytesText, markCut, utf8Length } from './text';
import { ownerOf, readCapped, workerUser, type TopNames } from './workspace-files';

/**
 * Instruction files: `AGENTS.md` (the cross-tool convention) or, where a folder has none, `CLAUDE.md`
 * (its common alias). Searched in the workspace and in the folders above it up to the repository
 * root (the nearest folder holding `.git`, owned with its `.git` by the worker's user); when no
 * such folder is on the way up, only the workspace itself is searched, so a stray `/tmp/AGENTS.md`
 * written by anyone on the machine is never read, even next to a `/tmp/.git`. Hard links and files
 * of another user are refused with a warning. Nearest first: the workspace's file comes first in the prompt and gets the byte budget first.
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

/**
 * The folders searched, nearest first: the workspace, then its parents up to the repository root
 * (the nearest folder holding `.git`). Above the workspace only a repository the worker's user owns
 * counts: a `.git` (or its folder) belonging to another user (anyone may create `/tmp/.git`) leaves
 * only the workspace searched, and `warn` says why.
 */
export async function instructionFolders(
  realWorkspace: string,
  warn: (text: string) => void = () => {},
): Promise<string[]> {
  const chain: string[] = [];
  for (let dir = realWorkspace; chain.length < MAX_INSTRUCTION_DEPTH; dir = path.dirname(dir)) {
    chain.push(dir);
    const git = await ownerOf(path.join(dir, '.git'));
    if (git !== undefined) {
      if (dir === realWorkspace) return chain;
      const user = workerUser();
      const owner = await ownerOf(dir);
      if (user === undefined || (git === user && owner === user)) return chain;
      warn(
        `instruction files above the workspace not read: the repository at ${dir} belongs to user ` +
          `${git === user ? owner : git}, not to the user this worker runs as (${user})`,
      );
      return [realWorkspace];
    }
    if (path.dirname(dir) === dir) break;
  }
  return [realWorkspace];
}

function shownPath(realWorkspace: string, dir: string, name: string): string {
  return dir === realWorkspace ? name : path.join(dir, name);
}

/**
 * The instruction files to put in the prompt, nearest first, within their caps; `warn` hears what
 * was skipped. `top`: the workspace's top names, when listed (workspace-files.ts, `listTop`).
 */
export async function readInstructions(
  realWorkspace: string,
  warn: (text: string) => void,
  top?: TopNames,
): Promise<InstructionFile[]> {
  const files: InstructionFile[] = [];
  let budget = MAX_INSTRUCTIONS_TOTAL_BYTES;
  const owners = await contextOwners(realWorkspace);
  for (const dir of await instructionFolders(realWorkspace, warn)) {
    let chosen: { name: string; read: Extract<Awaited<ReturnType<typeof readCapped>>, { kind: 'ok' }> } | undefined;
    for (const name of INSTRUCTION_FILE_NAMES) {
      const shown = shownPath(realWorkspace, dir, name);
      const cap = Math.min(MAX_INSTRUCTION_FILE_BYTES, budget);
      // Above the workspace, only the worker's user's files; in it, the workspace owner's too.
      const read =
        dir === realWorkspace
          ? await readCapped(dir, name, Math.max(cap, 1), owners.inside, top)
          : await readCapped(dir, name, Math.max(cap, 1), owners.above);
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

/**
 * Who may own a context file: the user the worker runs as, and in the workspace also the
 * workspace's owner (a folder mounted from elsewhere keeps its owner). Undefined: no check (a
 * platform without users).
 */
export async function contextOwners(realWorkspace: string): Promise<{ inside?: number[]; above?: number[] }> {
  const user = workerUser();
  if (user === undefined) return {};
  const owner = await ownerOf(realWorkspace);
  return { inside: [...new Set([user, ...(owner !== undefined ? [owner] : [])])], above: [user] };
}
