import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry } from '../../src/tools';
import { textProblem } from '../../src/safe-fs/text-check';
import { makeContext, makeTempDir } from '../tools/helpers';

/**
 * edit_file and write_file keep every byte they did not change: non-UTF-8 and binary files are
 * refused with the reason and the offending byte; UTF-8 text comes back byte for byte (CRLF, BOM).
 */
describe('file tools keep every byte they did not change', () => {
  const registry = createDefaultRegistry();
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const run = (tool: string, input: Record<string, unknown>) => registry.run(tool, input, makeContext(dir));
  const file = (name: string) => path.join(dir, name);

  test('edit_file refuses a Latin-1 file, naming the first byte that is not UTF-8, and changes nothing', async () => {
    // "café\r\nnaïve\r\n" in Latin-1: é is 0xE9, ï is 0xEF.
    const latin1 = Buffer.from('caf\xe9\r\nna\xefve\r\n', 'latin1');
    writeFileSync(file('latin1.txt'), latin1);
    const result = await run('edit_file', { path: 'latin1.txt', old_string: 'na', new_string: 'NA' });
    expect(result).toEqual({
      content:
        "Error: edit_file refused to change 'latin1.txt': it is not valid UTF-8 (the first byte that is not UTF-8 " +
        'is at byte offset 3). edit_file only edits UTF-8 text without NUL bytes, so that no byte it does not change ' +
        'is altered; use bash for other files.',
      isError: true,
    });
    expect(readFileSync(file('latin1.txt')).equals(latin1)).toBe(true);
  });

  test('edit_file refuses a binary file whose first NUL is after 8 KB', async () => {
    const bytes = Buffer.concat([Buffer.from('a'.repeat(9000) + 'needle'), Buffer.from([0, 1, 2])]);
    writeFileSync(file('late-nul.bin'), bytes);
    const result = await run('edit_file', { path: 'late-nul.bin', old_string: 'needle', new_string: 'pin' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('it is a binary file (it has a NUL byte at byte offset 9006)');
    expect(readFileSync(file('late-nul.bin')).equals(bytes)).toBe(true);
  });

  test('edit_file on UTF-8 with CRLF, a BOM and multi-byte characters changes only the edited bytes', async () => {
    const original = Buffer.from('\ufeffline one\r\nnaïve € 😀\r\nlast line\r\n', 'utf8');
    writeFileSync(file('crlf.txt'), original);
    const result = await run('edit_file', { path: 'crlf.txt', old_string: 'one\nnaïve', new_string: 'ONE\nnaïf' });
    expect(result.isError).toBe(false);
    const expected = Buffer.from('\ufeffline ONE\r\nnaïf € 😀\r\nlast line\r\n', 'utf8');
    expect(readFileSync(file('crlf.txt')).equals(expected)).toBe(true);
  });

  test('edit_file and write_file keep the file mode', async () => {
    writeFileSync(file('script.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(file('script.sh'), 0o751);
    await run('edit_file', { path: 'script.sh', old_string: 'hi', new_string: 'ho' });
    expect(statSync(file('script.sh')).mode & 0o7777).toBe(0o751);
    await run('write_file', { path: 'script.sh', content: '#!/bin/sh\n' });
    expect(statSync(file('script.sh')).mode & 0o7777).toBe(0o751);
    expect(readFileSync(file('script.sh'), 'utf8')).toBe('#!/bin/sh\n');
  });

  test('write_file refuses to overwrite a binary or non-UTF-8 file, saying why and what to do', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
    writeFileSync(file('image.png'), png);
    const result = await run('write_file', { path: 'image.png', content: 'text' });
    expect(result).toEqual({
      content:
        "Error: write_file refused to change 'image.png': it is not valid UTF-8 (the first byte that is not UTF-8 " +
        'is at byte offset 0). write_file does not overwrite binary or non-UTF-8 files, whose content read_file ' +
        'cannot show; if you mean to replace it, delete it with bash first.',
      isError: true,
    });
    expect(readFileSync(file('image.png')).equals(png)).toBe(true);
    writeFileSync(file('nul.dat'), Buffer.from('abc\0def'));
    expect((await run('write_file', { path: 'nul.dat', content: 'x' })).content).toContain(
      'it is a binary file (it has a NUL byte at byte offset 3)',
    );
  });

  test('write_file overwrites UTF-8 text and creates new files as before', async () => {
    writeFileSync(file('text.txt'), 'naïve\n');
    expect((await run('write_file', { path: 'text.txt', content: 'plain\n' })).isError).toBe(false);
    expect(readFileSync(file('text.txt'), 'utf8')).toBe('plain\n');
  });

  test('write_file checks a large existing file in chunks: a character across a chunk boundary is fine', async () => {
    // The scan reads 1 MiB at a time; '€' (3 bytes) starts one byte before the boundary.
    writeFileSync(file('large.txt'), 'a'.repeat(1024 * 1024 - 1) + '€ end\n');
    expect((await run('write_file', { path: 'large.txt', content: 'small\n' })).isError).toBe(false);
    writeFileSync(
      file('large-bad.txt'),
      Buffer.concat([Buffer.from('a'.repeat(1024 * 1024 + 5)), Buffer.from([0xe9])]),
    );
    expect((await run('write_file', { path: 'large-bad.txt', content: 'x' })).content).toContain(
      `the first byte that is not UTF-8 is at byte offset ${1024 * 1024 + 5}`,
    );
  });

  test('the UTF-8 check: overlong forms, surrogates, code points past U+10FFFF and cut sequences are refused', () => {
    const bad: [number[], number][] = [
      [[0x61, 0xc0, 0xaf], 1], // overlong '/'
      [[0xe0, 0x80, 0xaf], 0], // overlong, 3 bytes
      [[0xed, 0xa0, 0x80], 0], // UTF-16 surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // past U+10FFFF
      [[0x61, 0x62, 0xe2, 0x82], 2], // cut at the end
      [[0xff], 0],
    ];
    for (const [bytes, offset] of bad) {
      expect(textProblem(Buffer.from(bytes))).toEqual({ kind: 'not-utf8', offset });
    }
    expect(textProblem(Buffer.from('ok € 😀 \u{10ffff}', 'utf8'))).toBeUndefined();
  });
});
