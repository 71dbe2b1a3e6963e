import fc from 'fast-check';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry } from '../../src/tools';
import { FILE_TYPE_NAMES } from '../../src/tools/search/file-types';
import { GrepCollector, scanFile } from '../../src/tools/search/grep-scan';
import { GREP_MULTILINE_MAX_FILE_BYTES } from '../../src/tools/search/limits';
import { canSpanLines, compileMultiline, scanWholeFile } from '../../src/tools/search/multiline-scan';
import type { GrepMode, GrepQuery } from '../../src/tools/search/protocol';
import { compileGrepRegexes } from '../../src/tools/search/regex';
import { makeContext, makeTempDir, writeTree } from './helpers';

/** grep's `type` (ripgrep's file types) and `multiline` (rg -U --multiline-dotall). */

const { dir, cleanup } = makeTempDir('da-grep-tm-');
afterAll(cleanup);
const registry = createDefaultRegistry();
const grep = (input: Record<string, unknown>) => registry.run('grep', input, makeContext(dir));
async function out(input: Record<string, unknown>): Promise<string> {
  const result = await grep(input);
  expect(result.isError).toBe(false);
  return result.content;
}

beforeAll(() => {
  writeTree(dir, {
    'src/a.ts': 'const needle = 1;\n',
    'src/b.tsx': 'export const Needle = () => needle;\n',
    'src/c.js': 'var needle;\n',
    'lib/d.py': 'needle = True\n',
    'lib/e.pyi': 'needle: bool\n',
    Makefile: 'needle:\n\techo hi\n',
    'docs/f.md': '# needle\n',
    'crate/g.rs': 'fn needle() {}\n',
    'src/h.ts.bak': 'needle\n',
    'ml/block.txt': 'begin one\n  body\nend one\nbegin two end two\nno begin here\r\nBEGIN\r\nx\r\nEND\r\n',
    'ml/utf.txt': 'Grüße\nüber\n',
  });
});

describe('type', () => {
  test('selects files as ripgrep types name them, by base name at any depth', async () => {
    expect(await out({ pattern: 'needle', type: 'ts' })).toBe('src/a.ts\nsrc/b.tsx');
    expect(await out({ pattern: 'needle', type: 'py' })).toBe('lib/d.py\nlib/e.pyi');
    expect(await out({ pattern: 'needle', type: 'make' })).toBe('Makefile');
    expect(await out({ pattern: 'needle', type: 'md' })).toBe('docs/f.md');
    expect(await out({ pattern: 'needle', type: 'rust' })).toBe('crate/g.rs');
    expect(await out({ pattern: 'needle', type: 'js' })).toBe('src/c.js');
  });

  test('combines with glob: a file must pass both', async () => {
    expect(await out({ pattern: 'needle', type: 'ts', glob: '*.tsx' })).toBe('src/b.tsx');
    expect(await out({ pattern: 'needle', type: 'ts', glob: '!*.tsx' })).toBe('src/a.ts');
    expect(await out({ pattern: 'needle', type: 'py', glob: 'src/**' })).toContain('No matches found');
  });

  test('an unknown type is an is_error naming it and every accepted type', async () => {
    for (const type of ['typescriptx', '__proto__', 'constructor', 'TS']) {
      const result = await grep({ pattern: 'needle', type });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(`Unknown file type '${type}'`);
      expect(result.content).toContain(FILE_TYPE_NAMES.join(', '));
    }
    expect((await grep({ pattern: 'needle', type: 'x'.repeat(65) })).isError).toBe(true);
    expect((await grep({ pattern: 'needle', type: 7 })).isError).toBe(true);
  });

  test('the table covers the common languages', () => {
    for (const name of [
      'ts',
      'js',
      'py',
      'rust',
      'go',
      'java',
      'c',
      'cpp',
      'md',
      'json',
      'yaml',
      'sh',
      'ruby',
      'kotlin',
    ]) {
      expect(FILE_TYPE_NAMES).toContain(name);
    }
    expect(FILE_TYPE_NAMES.length).toBeGreaterThanOrEqual(40);
  });
});

describe('multiline', () => {
  test('a match spans lines and is reported at the line where it starts', async () => {
    const content = await out({ pattern: 'begin.*?end', multiline: true, output_mode: 'content', path: 'ml' });
    expect(content).toBe('ml/block.txt:1:begin one\nml/block.txt:4:begin two end two');
    // Without multiline the same pattern matches within one line only.
    expect(await out({ pattern: 'begin.*?end', output_mode: 'content', path: 'ml' })).toBe(
      'ml/block.txt:4:begin two end two',
    );
  });

  test('count counts the lines where matches start; case_insensitive works; a \\r before \\n belongs to the line', async () => {
    expect(await out({ pattern: 'begin.*?end', multiline: true, output_mode: 'count', path: 'ml' })).toBe(
      'ml/block.txt:2',
    );
    expect(
      await out({ pattern: 'begin\\s+x\\s+end\\r?$', multiline: true, case_insensitive: true, output_mode: 'content' }),
    ).toBe('ml/block.txt:6:BEGIN');
  });

  test('context lines surround the starting line', async () => {
    const content = await out({ pattern: 'body.end', multiline: true, output_mode: 'content', context: 1, path: 'ml' });
    expect(content).toBe('ml/block.txt-1-begin one\nml/block.txt:2:  body\nml/block.txt-3-end one');
  });

  test('non-ASCII text and empty matches step by whole characters', async () => {
    expect(await out({ pattern: 'ße.ü', multiline: true, output_mode: 'content', path: 'ml' })).toBe(
      'ml/utf.txt:1:Grüße',
    );
    expect(await out({ pattern: 'x*', multiline: true, output_mode: 'count', path: 'ml/utf.txt' })).toBe(
      'ml/utf.txt:2',
    );
  });

  test('stays linear-time RE2: a hostile pattern answers at once and back-references are refused', async () => {
    writeFileSync(path.join(dir, 'ml-hostile.txt'), `${'a'.repeat(50_000)}\n`.repeat(4));
    const started = Date.now();
    expect(await out({ pattern: '(a*)*b', multiline: true, path: 'ml-hostile.txt' })).toContain('No matches found');
    expect(Date.now() - started).toBeLessThan(20_000); // a backtracking engine never ends here
    const refused = await grep({ pattern: '(a)\\1', multiline: true });
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain('back-references');
  });

  test('a file over the cap is skipped with a note when the pattern can span lines, and streamed when it cannot', async () => {
    const big = path.join(dir, 'big', 'huge.log');
    writeTree(dir, { 'big/huge.log': '' });
    writeFileSync(big, `${'z'.repeat(1023)}\n`.repeat(GREP_MULTILINE_MAX_FILE_BYTES / 1024 + 16) + 'tail\nend\n');
    const spanning = await out({ pattern: 'tail.end', multiline: true, path: 'big' });
    expect(spanning).toContain('No matches found');
    expect(spanning).toContain('big/huge.log is larger than 16 MiB and was not searched in multiline mode.');
    expect(await out({ pattern: 'tail', multiline: true, path: 'big' })).toBe('big/huge.log');
  });
});

// ---- both engines give identical results ---------------------------------------------------

const files = makeTempDir('da-grep-prop-');
afterAll(files.cleanup);
let fileCounter = 0;

function withFile<T>(text: string, fn: (fd: number, file: string) => T): T {
  const file = path.join(files.dir, `f${++fileCounter}.txt`);
  writeFileSync(file, text);
  const fd = openSync(file, 'r');
  try {
    return fn(fd, file);
  } finally {
    closeSync(fd);
  }
}

function query(pattern: string, mode: GrepMode, before: number, after: number, caseInsensitive: boolean): GrepQuery {
  return { pattern, caseInsensitive, mode, before, after, root: files.dir, base: files.dir, baseIsFile: false };
}

/** The streaming line engine; `perLine` turns off the block pre-filter, `chunk` sets the read size. */
function lineEngine(text: string, q: GrepQuery, opts: { perLine?: boolean; chunk?: number } = {}) {
  const regexes = compileGrepRegexes(q.pattern, q.caseInsensitive);
  if (opts.perLine) regexes.block = undefined;
  return withFile(text, (fd) =>
    scanFile(fd, 'f', regexes, q, new GrepCollector(), Buffer.alloc(opts.chunk ?? 1 << 20)),
  );
}

function wholeEngine(text: string, q: GrepQuery) {
  const regex = compileMultiline(q.pattern, q.caseInsensitive);
  return withFile(text, (fd) => scanWholeFile(fd, 'f', regex, q, new GrepCollector(), 1 << 20));
}

/** File text over a small alphabet, so patterns match often: lines, \r\n, empty lines, multi-byte characters. */
const textArb = fc
  .array(fc.constantFrom('a', 'b', 'ab', ' ', '\n', '\n', '\r\n', 'ü', 'Ab', '_1'), { maxLength: 60 })
  .map((parts) => parts.join(''));

/** Patterns that cannot match a newline: the domain where both engines must agree. */
const atomArb = fc.constantFrom('a', 'b', 'ü', 'A', '\\w', '\\d', '[ab]', '[a-b_]', '\\b', '^', '$', ' ', '_', '\\.');
const pieceArb = fc
  .tuple(atomArb, fc.constantFrom('', '*', '+', '?', '{1,2}'))
  .map(([a, q]) => (/^[\\^$]b?$/.test(a) && q ? a : a + q));
const singleLinePatternArb = fc
  .array(
    fc.array(pieceArb, { minLength: 1, maxLength: 4 }).map((p) => p.join('')),
    { minLength: 1, maxLength: 2 },
  )
  .map((alternatives) => alternatives.join('|'));
const optionsArb = fc.record({
  mode: fc.constantFrom<GrepMode>('content', 'count', 'files_with_matches'),
  before: fc.integer({ min: 0, max: 2 }),
  after: fc.integer({ min: 0, max: 2 }),
  caseInsensitive: fc.boolean(),
});

describe('identical in both engines', () => {
  test('patterns that cannot span lines: the multiline engine finds exactly what the line engine finds', () => {
    fc.assert(
      fc.property(textArb, singleLinePatternArb, optionsArb, (text, pattern, o) => {
        expect(canSpanLines(pattern)).toBe(false);
        const q = query(pattern, o.mode, o.before, o.after, o.caseInsensitive);
        expect(wholeEngine(text, { ...q, multiline: true })).toEqual(lineEngine(text, q));
      }),
      { numRuns: 300 },
    );
  });

  test('the line engine gives the same answer with or without its block pre-filter, whatever the chunk size', () => {
    const anyPatternArb = fc.oneof(
      singleLinePatternArb,
      fc.constantFrom('a$', '^$', '\\Aa', 'b\\z', '(?i)A', '(?-m)^a'),
    );
    fc.assert(
      fc.property(textArb, anyPatternArb, optionsArb, fc.integer({ min: 1, max: 16 }), (text, pattern, o, chunk) => {
        const q = query(pattern, o.mode, o.before, o.after, o.caseInsensitive);
        const reference = lineEngine(text, q, { perLine: true });
        expect(lineEngine(text, q)).toEqual(reference);
        expect(lineEngine(text, q, { chunk })).toEqual(reference);
      }),
      { numRuns: 300 },
    );
  });

  test('patterns that can match a newline are sent to the whole-file engine', () => {
    for (const p of [
      'a.b',
      'a\\sb',
      'a[^x]b',
      'a\\nb',
      'a\\x0ab',
      '\\Aa',
      'b\\z',
      '(?s)a',
      'a\\Wb',
      'a\\Db',
      '\\p{Cc}',
      '[\\s]',
      '[[:space:]]',
      'a\nb',
    ]) {
      expect(canSpanLines(p)).toBe(true);
    }
  });
});
