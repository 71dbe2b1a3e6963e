import { mkdirSync, readdirSync, readlinkSync, truncateSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { createDefaultRegistry, createReadFileTool, ToolRegistry } from '../../src/tools';
import { waitUntil } from '../support/processes';
import { makeContext, makeTempDir } from './helpers';

describe('read_file', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  const read = (input: unknown) => registry.run('read_file', input, makeContext(dir));
  const numbered = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`;

  beforeAll(() => {
    writeFileSync(path.join(dir, 'small.txt'), 'alpha\nbeta\ngamma\n');
    writeFileSync(path.join(dir, 'no-newline.txt'), 'one\ntwo');
    writeFileSync(path.join(dir, 'crlf.txt'), 'one\r\ntwo\r\n');
    writeFileSync(path.join(dir, 'empty.txt'), '');
    writeFileSync(path.join(dir, 'blank-lines.txt'), '\n\nx\n');
    writeFileSync(
      path.join(dir, 'many.txt'),
      Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n') + '\n',
    );
    writeFileSync(
      path.join(dir, 'numbers.txt'),
      Array.from({ length: 2500 }, (_, i) => String(i + 1)).join('\n') + '\n',
    );
    writeFileSync(path.join(dir, 'long-line.txt'), `short\n${'y'.repeat(5000)}\nend\n`);
    writeFileSync(path.join(dir, 'binary.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    writeFileSync(path.join(dir, 'wide.txt'), Array.from({ length: 100 }, () => 'z'.repeat(1000)).join('\n'));
    mkdirSync(path.join(dir, 'folder'));
  });

  test('numbers lines like cat -n', async () => {
    await expect(read({ path: 'small.txt' })).resolves.toEqual({
      content: [numbered(1, 'alpha'), numbered(2, 'beta'), numbered(3, 'gamma')].join('\n'),
      isError: false,
    });
  });

  test('a last line without a newline is still shown; CRLF is shown without \\r', async () => {
    expect((await read({ path: 'no-newline.txt' })).content).toBe([numbered(1, 'one'), numbered(2, 'two')].join('\n'));
    expect((await read({ path: 'crlf.txt' })).content).toBe([numbered(1, 'one'), numbered(2, 'two')].join('\n'));
  });

  test('blank lines keep their numbers', async () => {
    expect((await read({ path: 'blank-lines.txt' })).content).toBe(
      [numbered(1, ''), numbered(2, ''), numbered(3, 'x')].join('\n'),
    );
  });

  test('offset and limit select a window, with a note when lines remain', async () => {
    const result = await read({ path: 'many.txt', offset: 10, limit: 3 });
    expect(result).toEqual({
      content: [
        numbered(10, 'line 10'),
        numbered(11, 'line 11'),
        numbered(12, 'line 12'),
        '… 2488 more lines; use offset=13 to continue.',
      ].join('\n'),
      isError: false,
    });
  });

  test('reads 2000 lines by default and says where to continue', async () => {
    // Short lines, so the 2000-line default and not the character cap decides where it stops.
    const lines = (await read({ path: 'numbers.txt' })).content.split('\n');
    expect(lines).toHaveLength(2001);
    expect(lines[1999]).toBe(numbered(2000, '2000'));
    expect(lines[2000]).toBe('… 500 more lines; use offset=2001 to continue.');
  });

  test('reading to the end has no note', async () => {
    const lines = (await read({ path: 'many.txt', offset: 2499 })).content.split('\n');
    expect(lines).toEqual([numbered(2499, 'line 2499'), numbered(2500, 'line 2500')]);
  });

  test('"1 more line" is singular', async () => {
    expect((await read({ path: 'many.txt', offset: 2498, limit: 2 })).content).toMatch(
      /… 1 more line; use offset=2500 to continue\.$/,
    );
  });

  test('an offset past the end is an error saying how long the file is', async () => {
    await expect(read({ path: 'small.txt', offset: 10 })).resolves.toEqual({
      content: "Error: offset 10 is past the end of 'small.txt', which has 3 lines.",
      isError: true,
    });
  });

  test('lines longer than 2000 characters are cut with a marker', async () => {
    const lines = (await read({ path: 'long-line.txt' })).content.split('\n');
    expect(lines[0]).toBe(numbered(1, 'short'));
    expect(lines[1]).toBe(numbered(2, `${'y'.repeat(2000)}… [line truncated: 3000 more characters]`));
    expect(lines[2]).toBe(numbered(3, 'end'));
  });

  test('output stays under the tool output cap and points to where to continue', async () => {
    const result = await read({ path: 'wide.txt' });
    expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    expect(result.content).not.toContain('[Output truncated');
    const match = /… (\d+) more lines; use offset=(\d+) to continue\.$/.exec(result.content);
    expect(match).not.toBeNull();
    expect(Number(match?.[1]) + Number(match?.[2]) - 1).toBe(100);
  });

  test('a CRLF split across read chunks is still one line ending, and a lone \\r is content', async () => {
    // The stream reads 64 KiB chunks: put the \r as the last byte of the first chunk.
    writeFileSync(path.join(dir, 'boundary.txt'), `${'a'.repeat(65535)}\r\nb\rc\r\n`);
    const lines = (await read({ path: 'boundary.txt' })).content.split('\n');
    expect(lines[0]).toBe(numbered(1, `${'a'.repeat(2000)}… [line truncated: 63535 more characters]`));
    expect(lines[1]).toBe(numbered(2, 'b\rc'));
    expect(lines).toHaveLength(2);
  });

  test('an empty file says it is empty', async () => {
    await expect(read({ path: 'empty.txt' })).resolves.toEqual({
      content: "File 'empty.txt' is empty.",
      isError: false,
    });
  });

  test('a missing file is a clear error', async () => {
    await expect(read({ path: 'nope/missing.txt' })).resolves.toEqual({
      content: "Error: File not found: 'nope/missing.txt'.",
      isError: true,
    });
  });

  test('a directory is a clear error', async () => {
    const result = await read({ path: 'folder' });
    expect(result).toEqual({
      content: "Error: 'folder' is a directory, not a file. Use glob to list the files in it.",
      isError: true,
    });
  });

  test('a binary file is refused', async () => {
    const result = await read({ path: 'binary.bin' });
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      "Error: 'binary.bin' is a binary file (it contains NUL bytes); read_file only reads text files.",
    );
  });

  test('absolute paths inside the workspace work and are shown relative', async () => {
    const result = await read({ path: path.join(dir, 'small.txt'), limit: 1 });
    expect(result.content).toBe(`${numbered(1, 'alpha')}\n… 2 more lines; use offset=2 to continue.`);
    const missing = await read({ path: path.join(dir, 'missing.txt') });
    expect(missing.content).toBe("Error: File not found: 'missing.txt'.");
  });

  test('offset and limit must be positive whole numbers', async () => {
    const result = await read({ path: 'small.txt', offset: 0, limit: 1.5 });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- offset: Too small: expected number to be >=1');
    expect(result.content).toContain('- limit: Invalid input: expected int, received number');
  });
});

/**
 * A file can be far larger than anything worth reading (`truncate -s 1T f` in the workspace makes
 * one in a millisecond): a call reads a bounded part of it, and stops when it is cancelled.
 */
describe('read_file reads a bounded part of huge files', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const maxScanBytes = 256 * 1024;
  const maxCountBytes = 64 * 1024;
  const registry = new ToolRegistry([createReadFileTool({ maxScanBytes, maxCountBytes })]);
  const read = (input: unknown) => registry.run('read_file', input, makeContext(dir));
  const numbered = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`;
  const bigLines = Array.from({ length: 100_000 }, (_, i) => `line ${i + 1}`).join('\n');

  beforeAll(() => {
    writeFileSync(path.join(dir, 'lines.txt'), bigLines);
    writeFileSync(path.join(dir, 'one-line.txt'), `first\n${'y'.repeat(1024 * 1024)}`);
  });

  test('lines past the count bound are not counted, and the note says so', async () => {
    const result = await read({ path: 'lines.txt', limit: 2 });
    expect(result).toEqual({
      content: [
        numbered(1, 'line 1'),
        numbered(2, 'line 2'),
        `… more lines (not all counted: the file has ${bigLines.length} bytes); use offset=3 to continue.`,
      ].join('\n'),
      isError: false,
    });
  });

  test('an offset past the scan bound is an error that says what to use instead', async () => {
    const result = await read({ path: 'lines.txt', offset: 90_000 });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      new RegExp(
        `^Error: read_file stopped after ${maxScanBytes} bytes, its limit per call, before line 90000 of ` +
          `'lines\\.txt' \\(${bigLines.length} bytes\\): \\d+ lines were read\\. Use grep`,
      ),
    );
  });

  test('one line longer than the scan bound is shown cut, with a note that reading stopped', async () => {
    const result = await read({ path: 'one-line.txt' });
    const lines = result.content.split('\n');
    expect(lines[0]).toBe(numbered(1, 'first'));
    expect(lines[1]).toMatch(/^ {5}2\ty{2000}… \[line truncated: \d+ more characters\]$/);
    expect(lines[2]).toBe(
      `… read_file stopped after ${maxScanBytes} bytes, its limit per call, reading 'one-line.txt' ` +
        `(${1024 * 1024 + 6} bytes): line 2 may go on, and more lines may follow; use offset=3 for the lines after it, ` +
        'or bash for the rest.',
    );
  });

  test('a cancelled read of a 64 GiB sparse file stops reading it', async () => {
    const file = path.join(dir, 'sparse.txt');
    writeFileSync(file, 'a\n'.repeat(4096));
    truncateSync(file, 64 * 1024 ** 3);
    const controller = new AbortController();
    const pending = createDefaultRegistry().run(
      'read_file',
      { path: 'sparse.txt', offset: 5000 },
      makeContext(dir, { signal: controller.signal }),
    );
    const opened = () => readdirSync('/proc/self/fd').some((fd) => readlinkOr(`/proc/self/fd/${fd}`) === file);
    expect(await waitUntil(opened, 5_000)).toBe(true);
    controller.abort();
    expect((await pending).content).toMatch(/was cancelled/);
    // Before, the read went on after the answer, through all 64 GiB.
    expect(await waitUntil(() => !opened(), 5_000)).toBe(true);
  });
});

function readlinkOr(p: string): string | undefined {
  try {
    return readlinkSync(p);
  } catch {
    return undefined;
  }
}
