import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { createDefaultRegistry } from '../../src/tools';
import { makeContext, makeWorkspace } from '../tools/helpers';

/**
 * Planted links, tool by tool: a symlink anywhere in a path (first component, middle, last, dangling)
 * pointing outside is refused and leaves the outside untouched; a hard link to an outside file can be
 * read, but writing or editing it replaces the workspace's name only. Symlinks that stay inside the
 * workspace are followed (pnpm's node_modules is made of them).
 */
describe('planted links cannot carry a file tool outside the workspace', () => {
  const registry = createDefaultRegistry();
  let ws: string;
  let outside: string;
  let cleanup: () => void;
  const secret = () => readFileSync(path.join(outside, 'secret.txt'), 'utf8');

  beforeEach(() => {
    ({ ws, outside, cleanup } = makeWorkspace());
    mkdirSync(path.join(outside, 'deep'));
    writeFileSync(path.join(outside, 'deep', 'secret.txt'), 'TOP SECRET\n');
    mkdirSync(path.join(ws, 'a', 'b'), { recursive: true });
    symlinkSync(outside, path.join(ws, 'first')); // first component
    symlinkSync(outside, path.join(ws, 'a', 'mid')); // middle component
    symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'a', 'b', 'last')); // last component
    symlinkSync('../../../outside/secret.txt', path.join(ws, 'a', 'b', 'relative')); // relative, climbing out
    symlinkSync(path.join(outside, 'new.txt'), path.join(ws, 'dangling')); // target does not exist yet
  });
  afterEach(() => cleanup());

  const run = (tool: string, input: Record<string, unknown>) => registry.run(tool, input, makeContext(ws));
  const inputs: Record<string, (p: string) => Record<string, unknown>> = {
    read_file: (p) => ({ path: p }),
    write_file: (p) => ({ path: p, content: 'pwned\n' }),
    edit_file: (p) => ({ path: p, old_string: 'TOP', new_string: 'PWNED' }),
  };
  const planted = ['first/secret.txt', 'a/mid/deep/secret.txt', 'a/b/last', 'a/b/relative', 'dangling'];

  for (const [tool, input] of Object.entries(inputs)) {
    for (const p of planted) {
      test(`${tool}: '${p}' is refused and the outside is untouched`, async () => {
        const result = await run(tool, input(p));
        expect(result.isError).toBe(true);
        expect(result.content).toMatch(/outside the workspace/);
        expect(result.content).not.toContain('TOP SECRET');
        expect(secret()).toBe('TOP SECRET\n');
        expect(readFileSync(path.join(outside, 'deep', 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
        expect(existsSync(path.join(outside, 'new.txt'))).toBe(false);
      });
    }
  }

  test('write_file: new folders under a symlinked middle component are not created outside', async () => {
    const result = await run('write_file', { path: 'a/mid/x/y/new.txt', content: 'x' });
    expect(result.isError).toBe(true);
    expect(existsSync(path.join(outside, 'x'))).toBe(false);
  });

  test('hard link to an outside file: read_file reads it, write_file and edit_file leave the outside file alone', async () => {
    linkSync(path.join(outside, 'secret.txt'), path.join(ws, 'hard.txt'));
    expect((await run('read_file', { path: 'hard.txt' })).content).toBe('     1\tTOP SECRET');

    const edited = await run('edit_file', { path: 'hard.txt', old_string: 'TOP', new_string: 'EDITED' });
    expect(edited.isError).toBe(false);
    expect(readFileSync(path.join(ws, 'hard.txt'), 'utf8')).toBe('EDITED SECRET\n');
    expect(secret()).toBe('TOP SECRET\n');

    linkSync(path.join(outside, 'secret.txt'), path.join(ws, 'hard2.txt'));
    const written = await run('write_file', { path: 'hard2.txt', content: 'overwritten\n' });
    expect(written.isError).toBe(false);
    expect(readFileSync(path.join(ws, 'hard2.txt'), 'utf8')).toBe('overwritten\n');
    expect(secret()).toBe('TOP SECRET\n');
    // The workspace names now hold files of their own; the outside file has its one name back.
    expect(statSync(path.join(outside, 'secret.txt')).nlink).toBe(1);
  });

  test('symlinks inside the workspace are followed, pnpm style (relative links into a store)', async () => {
    mkdirSync(path.join(ws, 'node_modules', '.pnpm', 'left-pad@1.0.0', 'node_modules', 'left-pad'), {
      recursive: true,
    });
    writeFileSync(path.join(ws, 'node_modules/.pnpm/left-pad@1.0.0/node_modules/left-pad/index.js'), 'pad\n');
    symlinkSync('.pnpm/left-pad@1.0.0/node_modules/left-pad', path.join(ws, 'node_modules', 'left-pad'));
    expect((await run('read_file', { path: 'node_modules/left-pad/index.js' })).content).toBe('     1\tpad');
    const edit = await run('edit_file', { path: 'node_modules/left-pad/index.js', old_string: 'pad', new_string: 'p' });
    expect(edit.isError).toBe(false);
    expect(
      readFileSync(path.join(ws, 'node_modules/.pnpm/left-pad@1.0.0/node_modules/left-pad/index.js'), 'utf8'),
    ).toBe('p\n');
    // The link itself is still a link: the write went to its target inside the workspace.
    symlinkSync('node_modules/left-pad/index.js', path.join(ws, 'entry.js'));
    expect((await run('write_file', { path: 'entry.js', content: 'q\n' })).isError).toBe(false);
    expect(readFileSync(path.join(ws, 'node_modules/left-pad/index.js'), 'utf8')).toBe('q\n');
  });

  test('a symlink loop is an error, not a hang', async () => {
    symlinkSync('loop-b', path.join(ws, 'loop-a'));
    symlinkSync('loop-a', path.join(ws, 'loop-b'));
    const result = await run('read_file', { path: 'loop-a/x' });
    expect(result).toEqual({
      content: "Error: Too many levels of symbolic links while resolving 'loop-a/x'.",
      isError: true,
    });
  });

  test('a FIFO is refused without blocking the worker', async () => {
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    const result = await run('read_file', { path: 'pipe' });
    expect(result).toEqual({ content: "Error: 'pipe' is not a regular file.", isError: true });
  });

  test('a file in the middle of a path is named in the refusal', async () => {
    writeFileSync(path.join(ws, 'plain.txt'), 'x');
    const result = await run('write_file', { path: 'plain.txt/x.txt', content: 'x' });
    expect(result).toEqual({
      content: "Error: 'plain.txt' is not a directory, so 'plain.txt/x.txt' cannot be reached through it.",
      isError: true,
    });
  });

  test('write_file leaves no temporary file behind, on success or failure', async () => {
    await run('write_file', { path: 'a/b/ok.txt', content: 'ok' });
    mkdirSync(path.join(ws, 'a', 'b', 'adir'));
    await run('write_file', { path: 'a/b/adir', content: 'x' });
    expect(readdirSync(path.join(ws, 'a', 'b')).sort()).toEqual(['adir', 'last', 'ok.txt', 'relative']);
  });

  test('a unix socket is refused in words, without the internal /proc/self/fd path', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path.join(ws, 'sock'), resolve));
    try {
      for (const tool of ['read_file', 'edit_file'] as const) {
        const result = await run(tool, inputFor(tool));
        expect(result).toEqual({
          content: "Error: Cannot use 'sock': it is not a regular file (a socket or a device) (ENXIO).",
          isError: true,
        });
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test('a path the kernel could never open is refused before any folder is created', async () => {
    const deep = `new/${'d/'.repeat(2100)}f.txt`;
    expect(await run('write_file', { path: deep, content: 'x' })).toEqual({
      content: `Error: Path '${deep.slice(0, 100)}…' is ${deep.length} bytes long; paths may be at most 4096 bytes.`,
      isError: true,
    });
    expect(existsSync(path.join(ws, 'new'))).toBe(false);
    const name = 'n'.repeat(256);
    expect(await run('write_file', { path: `new/${name}`, content: 'x' })).toEqual({
      content: `Error: The name '${name.slice(0, 100)}…' in the path is longer than 255 bytes, the longest file name allowed.`,
      isError: true,
    });
    expect(existsSync(path.join(ws, 'new'))).toBe(false);
  });
});

function inputFor(tool: 'read_file' | 'edit_file'): Record<string, unknown> {
  return tool === 'read_file' ? { path: 'sock' } : { path: 'sock', old_string: 'a', new_string: 'b' };
}
