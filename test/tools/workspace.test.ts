import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry, resolveInWorkspace, WorkspaceError, workspaceRelative } from '../../src/tools';
import { makeContext, makeWorkspace } from './helpers';

describe('resolveInWorkspace', () => {
  const { ws, outside, cleanup } = makeWorkspace();
  afterAll(cleanup);
  beforeAll(() => {
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, 'src', 'a.ts'), 'a');
    symlinkSync(outside, path.join(ws, 'out-dir'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'out-file'));
    symlinkSync(path.join(outside, 'not-yet.txt'), path.join(ws, 'dangling-out'));
    symlinkSync(path.join(ws, 'src'), path.join(ws, 'src-link'));
    symlinkSync('src/new.txt', path.join(ws, 'dangling-in'));
    symlinkSync('loop-b', path.join(ws, 'loop-a'));
    symlinkSync('loop-a', path.join(ws, 'loop-b'));
    // A workspace reached through a symlink, as with macOS /tmp → /private/tmp.
    symlinkSync(ws, path.join(path.dirname(ws), 'ws-link'));
  });

  test('relative paths resolve inside the workspace, existing or not', async () => {
    await expect(resolveInWorkspace(ws, 'src/a.ts')).resolves.toBe(path.join(ws, 'src', 'a.ts'));
    await expect(resolveInWorkspace(ws, './src/../src/a.ts')).resolves.toBe(path.join(ws, 'src', 'a.ts'));
    await expect(resolveInWorkspace(ws, 'new/deep/file.txt')).resolves.toBe(path.join(ws, 'new', 'deep', 'file.txt'));
    await expect(resolveInWorkspace(ws, '.')).resolves.toBe(ws);
  });

  test('absolute paths inside the workspace are accepted', async () => {
    await expect(resolveInWorkspace(ws, path.join(ws, 'src', 'a.ts'))).resolves.toBe(path.join(ws, 'src', 'a.ts'));
  });

  test('a name starting with two dots is not an escape', async () => {
    await expect(resolveInWorkspace(ws, '..hidden')).resolves.toBe(path.join(ws, '..hidden'));
  });

  test('symlinks inside the workspace resolve to their real path', async () => {
    await expect(resolveInWorkspace(ws, 'src-link/a.ts')).resolves.toBe(path.join(ws, 'src', 'a.ts'));
    await expect(resolveInWorkspace(ws, 'dangling-in')).resolves.toBe(path.join(ws, 'src', 'new.txt'));
  });

  test('a workspace given through a symlink accepts absolute paths spelled either way', async () => {
    const linked = path.join(path.dirname(ws), 'ws-link');
    await expect(resolveInWorkspace(linked, path.join(linked, 'src', 'a.ts'))).resolves.toBe(
      path.join(ws, 'src', 'a.ts'),
    );
    await expect(resolveInWorkspace(linked, path.join(ws, 'src', 'a.ts'))).resolves.toBe(path.join(ws, 'src', 'a.ts'));
  });

  test('`..` escapes are refused with a clear message, even for paths that do not exist', async () => {
    await expect(resolveInWorkspace(ws, '../x')).rejects.toThrow(
      `Path '../x' is outside the workspace ${ws}; tools may only access files inside it.`,
    );
    await expect(resolveInWorkspace(ws, 'src/../../outside/secret.txt')).rejects.toThrow(WorkspaceError);
    await expect(resolveInWorkspace(ws, '..')).rejects.toThrow(/outside the workspace/);
  });

  test('absolute paths outside the workspace are refused', async () => {
    await expect(resolveInWorkspace(ws, '/etc/passwd')).rejects.toThrow(
      `Path '/etc/passwd' is outside the workspace ${ws}; tools may only access files inside it.`,
    );
    await expect(resolveInWorkspace(ws, path.join(outside, 'secret.txt'))).rejects.toThrow(WorkspaceError);
  });

  test('symlinks leading outside are refused: directory, file, and dangling link', async () => {
    await expect(resolveInWorkspace(ws, 'out-dir/secret.txt')).rejects.toThrow(
      `Path 'out-dir/secret.txt' is outside the workspace ${ws} (it resolves to ${path.join(outside, 'secret.txt')})`,
    );
    await expect(resolveInWorkspace(ws, 'out-dir/new/file.txt')).rejects.toThrow(WorkspaceError);
    await expect(resolveInWorkspace(ws, 'out-file')).rejects.toThrow(WorkspaceError);
    await expect(resolveInWorkspace(ws, 'dangling-out')).rejects.toThrow(
      `(it resolves to ${path.join(outside, 'not-yet.txt')})`,
    );
  });

  test('symlink loops are an error, not a hang', async () => {
    await expect(resolveInWorkspace(ws, 'loop-a')).rejects.toThrow(/symbolic links/);
  });

  test('empty paths and missing workspaces are clear errors', async () => {
    await expect(resolveInWorkspace(ws, '')).rejects.toThrow(/non-empty/);
    await expect(resolveInWorkspace(path.join(ws, 'nope'), 'a')).rejects.toThrow(
      `The workspace directory ${path.join(ws, 'nope')} does not exist.`,
    );
  });

  test('workspaceRelative shows paths relative to the root', () => {
    expect(workspaceRelative(ws, path.join(ws, 'src', 'a.ts'))).toBe('src/a.ts');
    expect(workspaceRelative(ws, ws)).toBe('.');
  });
});

/**
 * Every file tool must refuse the same four escapes. Each case names the tool input that tries to
 * reach `<tmp>/outside`, which holds `secret.txt`.
 */
describe('file tools refuse to leave the workspace', () => {
  const { ws, outside, cleanup } = makeWorkspace();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  beforeAll(() => {
    writeFileSync(path.join(ws, 'inside.txt'), 'TOP SECRET is not here\n');
    symlinkSync(outside, path.join(ws, 'link-dir'));
    symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'link-file'));
  });

  const escapes = {
    'relative ../': (file: string) => `../outside/${file}`,
    'absolute path outside': (file: string) => path.join(outside, file),
    'symlink to an outside directory': (file: string) => `link-dir/${file}`,
  };

  const inputs: Record<string, (p: string) => Record<string, unknown>> = {
    read_file: (p) => ({ path: p }),
    write_file: (p) => ({ path: p, content: 'pwned' }),
    edit_file: (p) => ({ path: p, old_string: 'TOP', new_string: 'PWNED' }),
  };

  for (const [tool, input] of Object.entries(inputs)) {
    for (const [kind, make] of Object.entries(escapes)) {
      test(`${tool}: ${kind}`, async () => {
        const result = await registry.run(tool, input(make('secret.txt')), makeContext(ws));
        expect(result.isError).toBe(true);
        expect(result.content).toMatch(
          /^Error: Path '.*' is outside the workspace .*; tools may only access files inside it\.$/,
        );
        expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
      });
    }
    test(`${tool}: symlinked file pointing outside`, async () => {
      const result = await registry.run(tool, input('link-file'), makeContext(ws));
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/is outside the workspace/);
      expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    });
  }

  test('write_file: creating a new file through a symlinked directory is refused', async () => {
    const result = await registry.run('write_file', { path: 'link-dir/sub/new.txt', content: 'x' }, makeContext(ws));
    expect(result.isError).toBe(true);
    expect(existsSync(path.join(outside, 'sub'))).toBe(false);
  });

  test('write_file: a dangling symlink whose target is outside is refused', async () => {
    symlinkSync(path.join(outside, 'planted.txt'), path.join(ws, 'dangling'));
    const result = await registry.run('write_file', { path: 'dangling', content: 'x' }, makeContext(ws));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/is outside the workspace/);
    expect(existsSync(path.join(outside, 'planted.txt'))).toBe(false);
  });

  for (const [kind, make] of Object.entries(escapes)) {
    test(`grep: path via ${kind}`, async () => {
      const dirPath = make('x').replace(/\/x$/, '');
      const result = await registry.run('grep', { pattern: 'SECRET', path: dirPath }, makeContext(ws));
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/is outside the workspace/);
    });
  }
  test('grep: symlinked file or directory inside the tree is not followed', async () => {
    const result = await registry.run('grep', { pattern: 'SECRET', output_mode: 'content' }, makeContext(ws));
    expect(result).toEqual({ content: 'inside.txt:1:TOP SECRET is not here', isError: false });
  });
  test('grep: symlinked file named directly is refused', async () => {
    const result = await registry.run('grep', { pattern: 'SECRET', path: 'link-file' }, makeContext(ws));
    expect(result.isError).toBe(true);
  });

  for (const [kind, make] of Object.entries(escapes)) {
    test(`glob: path via ${kind}`, async () => {
      const dirPath = make('x').replace(/\/x$/, '');
      const result = await registry.run('glob', { pattern: '*', path: dirPath }, makeContext(ws));
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/is outside the workspace/);
    });
    test(`glob: pattern via ${kind}`, async () => {
      const result = await registry.run('glob', { pattern: make('*.txt') }, makeContext(ws));
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/is outside the workspace/);
    });
  }

  test('glob: symlinks inside the tree are not followed', async () => {
    const result = await registry.run('glob', { pattern: '**/*' }, makeContext(ws));
    expect(result.content.split('\n')).not.toContain('link-dir/secret.txt');
    expect(result.content).not.toContain('secret');
  });
});
