import { mkdirSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { assembleContext, type SandboxMode } from '../../src/context';
import type { AssembleContextInput, AssembledContext } from '../../src/shared/context-io';
import { createDefaultRegistry } from '../../src/tools';
import { makeTempDir, writeTree } from '../tools/helpers';

export { makeTempDir, writeTree };

const registry = createDefaultRegistry();

/** Assemble for `workspace` with the worker's built-in tools; the start date is fixed, not today. */
export function assemble(
  workspace: string,
  input: Partial<AssembleContextInput> = {},
  sandbox: SandboxMode = 'bwrap',
): Promise<AssembledContext> {
  return assembleContext(
    { workspace, startedAt: '2001-02-03T04:05:06.000Z', model: 'claude-sonnet-5-5', ...input },
    { tools: registry, sandbox },
  );
}

/** A temporary folder holding `repo/.git` and the workspace `repo/pkg` (real paths). */
export function makeRepo(): { root: string; repo: string; ws: string; cleanup: () => void } {
  const { dir, cleanup } = makeTempDir('da-context-');
  const repo = path.join(dir, 'repo');
  const ws = path.join(repo, 'pkg');
  mkdirSync(path.join(repo, '.git'), { recursive: true });
  mkdirSync(ws);
  return { root: dir, repo, ws, cleanup };
}

export function link(target: string, at: string): void {
  mkdirSync(path.dirname(at), { recursive: true });
  symlinkSync(target, at);
}

/** The position of each heading in the system prompt, in the order asked; -1 when absent. */
export function headingPositions(system: string, titles: string[]): number[] {
  return titles.map((title) => system.indexOf(`# ${title}\n`));
}

/** A SKILL.md with the given frontmatter lines. */
export function skillFile(front: string, body = '# Steps\n1. Do it.\n'): string {
  return `---\n${front}\n---\n${body}`;
}
