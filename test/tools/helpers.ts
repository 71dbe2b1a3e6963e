import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ToolContext } from '../../src/tools/types';

/** A ToolContext for a workspace, with a live (never aborted unless you pass one) signal. */
export function makeContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    signal: new AbortController().signal,
    heartbeat: () => {},
    toolUseId: 't1',
    ...overrides,
  };
}

/** A fresh temporary directory (real path), removed by the returned cleanup. */
export function makeTempDir(prefix = 'da-tools-'): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Write files given as `{ 'a/b.txt': 'content' }`, creating folders. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
}

/**
 * A workspace with a sibling "outside" directory holding a secret, for escape tests:
 * `<tmp>/ws` is the workspace, `<tmp>/outside/secret.txt` must never be readable through the tools.
 */
export function makeWorkspace(): { ws: string; outside: string; cleanup: () => void } {
  const { dir, cleanup } = makeTempDir();
  const ws = path.join(dir, 'ws');
  const outside = path.join(dir, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
  return { ws, outside, cleanup };
}
