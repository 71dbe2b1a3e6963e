import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry } from '../../src/tools';
import { makeContext, makeTempDir } from './helpers';

describe('write_file', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  const write = (input: unknown) => registry.run('write_file', input, makeContext(dir));

  test('creates missing parent folders and reports bytes and lines', async () => {
    const result = await write({ path: 'a/b/c/new.txt', content: 'hello\nworld\n' });
    expect(result).toEqual({ content: 'Wrote 12 bytes (2 lines) to a/b/c/new.txt', isError: false });
    expect(readFileSync(path.join(dir, 'a/b/c/new.txt'), 'utf8')).toBe('hello\nworld\n');
  });

  test('counts bytes of UTF-8, and a last line without newline', async () => {
    const result = await write({ path: 'utf8.txt', content: 'héllo\nwörld' });
    expect(result.content).toBe('Wrote 13 bytes (2 lines) to utf8.txt');
  });

  test('an empty file is 0 bytes and 0 lines; singular forms read right', async () => {
    expect((await write({ path: 'empty.txt', content: '' })).content).toBe('Wrote 0 bytes (0 lines) to empty.txt');
    expect((await write({ path: 'one.txt', content: 'x' })).content).toBe('Wrote 1 byte (1 line) to one.txt');
  });

  test('overwrites an existing file completely', async () => {
    writeFileSync(path.join(dir, 'over.txt'), 'a much longer original content\n');
    await write({ path: 'over.txt', content: 'short' });
    expect(readFileSync(path.join(dir, 'over.txt'), 'utf8')).toBe('short');
  });

  test('an absolute path inside the workspace is shown relative', async () => {
    const result = await write({ path: path.join(dir, 'abs.txt'), content: 'x\n' });
    expect(result.content).toBe('Wrote 2 bytes (1 line) to abs.txt');
  });

  test('writing onto a directory is a clear error', async () => {
    mkdirSync(path.join(dir, 'adir'));
    const result = await write({ path: 'adir', content: 'x' });
    expect(result).toEqual({
      content: "Error: 'adir' is a directory; give the path of a file to write.",
      isError: true,
    });
  });

  test('content is required', async () => {
    const result = await write({ path: 'x.txt' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- content: Invalid input: expected string, received undefined');
  });
});
