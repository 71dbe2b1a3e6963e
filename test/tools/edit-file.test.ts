import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry } from '../../src/tools';
import { MAX_EDIT_FILE_BYTES, MAX_EDIT_REPLACEMENTS } from '../../src/tools/edit-file';
import { makeContext, makeTempDir } from './helpers';

describe('edit_file', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  const edit = (input: unknown) => registry.run('edit_file', input, makeContext(dir));
  const file = (name: string) => path.join(dir, name);
  const numbered = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`;
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  test('replaces a unique string and shows a numbered snippet around it', async () => {
    writeFileSync(file('once.txt'), lines(20));
    const result = await edit({ path: 'once.txt', old_string: 'line 10\n', new_string: 'ten\nTEN\n' });
    expect(result).toEqual({
      content: [
        'Edited once.txt: 1 replacement. Snippet of the result around the first edit:',
        numbered(7, 'line 7'),
        numbered(8, 'line 8'),
        numbered(9, 'line 9'),
        numbered(10, 'ten'),
        numbered(11, 'TEN'),
        numbered(12, 'line 11'),
        numbered(13, 'line 12'),
        numbered(14, 'line 13'),
      ].join('\n'),
      isError: false,
    });
    expect(readFileSync(file('once.txt'), 'utf8')).toBe(lines(20).replace('line 10\n', 'ten\nTEN\n'));
  });

  test('zero matches is an error that says so and changes nothing', async () => {
    writeFileSync(file('zero.txt'), 'function f() {\n  return 1;\n}\n');
    const result = await edit({ path: 'zero.txt', old_string: 'return 2;', new_string: 'return 3;' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Error: old_string was not found in 'zero.txt'\. It must match the file exactly, including whitespace/,
    );
    expect(readFileSync(file('zero.txt'), 'utf8')).toBe('function f() {\n  return 1;\n}\n');
  });

  test('a near miss on surrounding whitespace gets a hint', async () => {
    writeFileSync(file('ws.txt'), 'a\n  b\n');
    const result = await edit({ path: 'ws.txt', old_string: '  b  \n\n', new_string: 'c' });
    expect(result.content).toContain('matches when its leading/trailing whitespace is removed');
  });

  test('line-number prefixes copied from read_file get a hint', async () => {
    writeFileSync(file('prefix.txt'), 'a\nb\n');
    const result = await edit({ path: 'prefix.txt', old_string: '     2\tb', new_string: 'c' });
    expect(result.content).toContain('line-number prefixes');
  });

  test('several matches is an error with the count and line numbers, unless replace_all', async () => {
    writeFileSync(file('many.txt'), 'x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n');
    const result = await edit({ path: 'many.txt', old_string: 'x = 1', new_string: 'x = 9' });
    expect(result).toEqual({
      content:
        "Error: old_string occurs 3 times in 'many.txt' (at lines 1, 3, 5). Include more surrounding context to make " +
        'it unique, or set replace_all to true to replace every occurrence.',
      isError: true,
    });
    expect(readFileSync(file('many.txt'), 'utf8')).toBe('x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n');
  });

  test('replace_all replaces every occurrence and reports the count', async () => {
    writeFileSync(file('all.txt'), 'x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n');
    const result = await edit({ path: 'all.txt', old_string: 'x = 1', new_string: 'x = 9', replace_all: true });
    expect(result.isError).toBe(false);
    expect(result.content.split('\n')[0]).toBe(
      'Edited all.txt: 3 replacements. Snippet of the result around the first edit:',
    );
    expect(result.content).toContain(numbered(1, 'x = 9'));
    expect(readFileSync(file('all.txt'), 'utf8')).toBe('x = 9\ny = 2\nx = 9\nz = 3\nx = 9\n');
  });

  test('replace_all with a single occurrence works too', async () => {
    writeFileSync(file('single.txt'), 'a b c');
    const result = await edit({ path: 'single.txt', old_string: 'b', new_string: 'B', replace_all: true });
    expect(result.content).toMatch(/^Edited single.txt: 1 replacement\./);
    expect(readFileSync(file('single.txt'), 'utf8')).toBe('a B c');
  });

  test('identical old and new strings are an error', async () => {
    writeFileSync(file('same.txt'), 'abc');
    await expect(edit({ path: 'same.txt', old_string: 'b', new_string: 'b' })).resolves.toEqual({
      content: 'Error: old_string and new_string are identical; there is nothing to change.',
      isError: true,
    });
  });

  test('an empty old_string is refused by the schema', async () => {
    writeFileSync(file('empty-old.txt'), 'abc');
    const result = await edit({ path: 'empty-old.txt', old_string: '', new_string: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- old_string: old_string must not be empty; use write_file to create a file');
  });

  test('$ patterns in new_string are inserted literally', async () => {
    writeFileSync(file('dollar.txt'), 'price: X\n');
    await edit({ path: 'dollar.txt', old_string: 'X', new_string: "$& $1 $$ $'" });
    expect(readFileSync(file('dollar.txt'), 'utf8')).toBe("price: $& $1 $$ $'\n");
  });

  test('CRLF files can be edited with \\n strings (as read_file shows them) and keep CRLF', async () => {
    writeFileSync(file('crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
    const result = await edit({ path: 'crlf.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' });
    expect(result.isError).toBe(false);
    expect(readFileSync(file('crlf.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  test('the snippet is bounded for a huge replacement', async () => {
    writeFileSync(file('huge.txt'), 'start\nMARK\nend\n');
    const result = await edit({ path: 'huge.txt', old_string: 'MARK', new_string: lines(500).trimEnd() });
    expect(result.content.split('\n').length).toBeLessThanOrEqual(21);
  });

  test('a missing file is a clear error', async () => {
    await expect(edit({ path: 'missing.txt', old_string: 'a', new_string: 'b' })).resolves.toEqual({
      content: "Error: File not found: 'missing.txt'.",
      isError: true,
    });
  });

  test('a binary file is refused', async () => {
    writeFileSync(file('bin.dat'), Buffer.from([0x61, 0x00, 0x62]));
    const result = await edit({ path: 'bin.dat', old_string: 'a', new_string: 'c' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('binary file');
  });

  test('a not-found old_string of 200,000 blank lines gets its hint at once (the hint check is linear)', async () => {
    writeFileSync(file('hint.txt'), 'hello\n');
    const result = await edit({ path: 'hint.txt', old_string: `${' \n'.repeat(200_000)}zz`, new_string: 'y' });
    expect(result.content).toMatch(/^Error: old_string was not found in 'hint\.txt'\. It must match the file exactly/);
    const prefixed = await edit({ path: 'hint.txt', old_string: 'x\r    12\thello', new_string: 'y' });
    expect(prefixed.content).toMatch(/It looks like it includes read_file line-number prefixes/);
  });

  test(`replace_all replaces up to ${MAX_EDIT_REPLACEMENTS} occurrences; more is refused and the file is unchanged`, async () => {
    writeFileSync(file('many.txt'), 'a'.repeat(MAX_EDIT_REPLACEMENTS));
    const ok = await edit({ path: 'many.txt', old_string: 'a', new_string: 'b', replace_all: true });
    expect(ok.content).toMatch(new RegExp(`^Edited many\\.txt: ${MAX_EDIT_REPLACEMENTS} replacements\\.`));
    expect(readFileSync(file('many.txt'), 'utf8')).toBe('b'.repeat(MAX_EDIT_REPLACEMENTS));
    writeFileSync(file('many.txt'), 'a'.repeat(MAX_EDIT_REPLACEMENTS + 1));
    const refused = await edit({ path: 'many.txt', old_string: 'a', new_string: 'b', replace_all: true });
    expect(refused).toEqual({
      content:
        `Error: old_string occurs more than ${MAX_EDIT_REPLACEMENTS} times in 'many.txt'; edit_file replaces at most ` +
        `${MAX_EDIT_REPLACEMENTS} occurrences in one call. Use bash (for example sed) for a replacement this large.`,
      isError: true,
    });
    expect(readFileSync(file('many.txt'), 'utf8')).toBe('a'.repeat(MAX_EDIT_REPLACEMENTS + 1));
  });

  test('an edit that would make the file larger than the edit limit is refused', async () => {
    writeFileSync(file('grow.txt'), 'x'.repeat(1000));
    const newString = 'y'.repeat(Math.ceil(MAX_EDIT_FILE_BYTES / 1000) + 1);
    const result = await edit({ path: 'grow.txt', old_string: 'x', new_string: newString, replace_all: true });
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      `Error: The edit would make 'grow.txt' ${1000 * newString.length} bytes; edit_file writes files up to ` +
        `${MAX_EDIT_FILE_BYTES} bytes. Use bash for larger files.`,
    );
    expect(readFileSync(file('grow.txt'), 'utf8')).toBe('x'.repeat(1000));
  });

  test('the snippet of an edit at the end of 100,000 empty lines numbers them right', async () => {
    writeFileSync(file('tail.txt'), `${'\n'.repeat(100_000)}X\r\n`);
    const result = await edit({ path: 'tail.txt', old_string: 'X', new_string: 'Y' });
    expect(result.content).toBe(
      [
        'Edited tail.txt: 1 replacement. Snippet of the result around the first edit:',
        numbered(99_998, ''),
        numbered(99_999, ''),
        numbered(100_000, ''),
        numbered(100_001, 'Y'),
      ].join('\n'),
    );
  });
});
