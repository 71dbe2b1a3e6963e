/**
 * Finding: "a file name with a newline forging glob output". glob lists one path a line, so a file
 * named `x\nsecrets/keys.txt` read as two paths, one of them made up. Such names are now listed in
 * double quotes with JSON escapes, and that spelling opens the file.
 */
import { createDefaultRegistry } from '../../src/tools';
import { makeContext, makeTempDir, writeTree } from '../tools/helpers';

const { dir, cleanup } = makeTempDir('da-glob-names-');
afterAll(cleanup);
const registry = createDefaultRegistry();

test('a name with a newline or another control character is one quoted line, and opens as listed', async () => {
  writeTree(dir, {
    'plain.txt': 'plain\n',
    'x\nsecrets/keys.txt': 'forged\n',
    'bell\u0007.txt': 'bell\n',
    '"quoted".txt': 'quoted\n',
  });
  const result = await registry.run('glob', { pattern: '**/*.txt' }, makeContext(dir));
  const lines = result.content.split('\n');
  expect(lines).toContain('"x\\nsecrets/keys.txt"');
  expect(lines).toContain('"bell\\u0007.txt"');
  expect(lines).toContain('"\\"quoted\\".txt"');
  expect(lines).toContain('plain.txt');
  expect(lines).not.toContain('secrets/keys.txt');
  expect(result.content).not.toContain('\u0007');
  expect(lines[lines.length - 1]).toMatch(/^\(Paths in double quotes hold control characters/);

  const listed = lines.find((l) => l.startsWith('"x'));
  const read = await registry.run('read_file', { path: JSON.parse(listed as string) as string }, makeContext(dir));
  expect(read.content).toMatch(/forged/);
});

test('a listing without such names has no note', async () => {
  const result = await registry.run('glob', { pattern: 'plain*' }, makeContext(dir));
  expect(result.content).toBe('plain.txt');
});
