import { symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { createDefaultRegistry } from '../../src/tools';
import { GREP_DEFAULT_HEAD_LIMIT } from '../../src/tools/grep';
import { runGrep } from '../../src/tools/search/jobs';
import { GREP_MAX_FILE_HITS } from '../../src/tools/search/limits';
import { makeContext, makeTempDir, writeTree } from './helpers';

const FIXTURE: Record<string, string | Buffer> = {
  'README.md': '# Project\nTODO: write docs\n',
  'src/app.ts': [
    'import { helper } from "./util";',
    '',
    'export function main() {',
    '  // TODO: handle errors',
    '  const value = helper(1);',
    '  return value;',
    '}',
    '',
    'export function other() {',
    '  return helper(2); // todo lower case',
    '}',
    '',
  ].join('\n'),
  'src/util.ts': 'export function helper(n: number) {\n  return n * 2;\n}\n',
  'src/deep/nested/file.js': 'const helper = require("x");\nmodule.exports = helper;\n',
  'src/view.tsx': 'export const View = () => <div>helper</div>;\n',
  'src/crlf.txt': 'line end\r\nother\r\n',
  'src/no-newline.txt': 'last helper line',
  'src/long.txt': `${'helper '.repeat(200)}\n`,
  '.hidden/secret.ts': 'helper in hidden file\n',
  '.git/HEAD': 'helper in git\n',
  'node_modules/pkg/index.js': 'helper in node_modules\n',
  'data/binary.bin': Buffer.concat([
    Buffer.from('helper before nul\n'),
    Buffer.from([0, 1, 2]),
    Buffer.from('\nhelper\n'),
  ]),
  // A NUL far past the first chunk: the file is still binary, even though a match came first.
  'data/late-binary.dat': Buffer.concat([Buffer.from('helper early\n'), Buffer.alloc(100_000, 0x61), Buffer.from([0])]),
  'notes/ünïcödé.txt': 'Grüße helper\n',
  'context.txt': ['a', 'b', 'MATCH 1', 'c', 'd', 'e', 'f', 'MATCH 2', 'g', 'MATCH 3', 'h', 'i', 'j'].join('\n') + '\n',
};

describe('grep tool', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  const grep = (input: unknown) => registry.run('grep', input, makeContext(dir));
  const out = async (input: unknown) => {
    const result = await grep(input);
    expect(result.isError).toBe(false);
    return result.content;
  };

  beforeAll(() => {
    writeTree(dir, FIXTURE);
    symlinkSync(path.join(dir, 'src'), path.join(dir, 'src-link'));
    symlinkSync(path.join(dir, 'src', 'util.ts'), path.join(dir, 'util-link.ts'));
  });

  test('files_with_matches is the default: sorted relative paths; hidden included; .git, node_modules, binary and symlinks skipped', async () => {
    expect(await out({ pattern: 'helper' })).toBe(
      [
        '.hidden/secret.ts',
        'notes/ünïcödé.txt',
        'src/app.ts',
        'src/deep/nested/file.js',
        'src/long.txt',
        'src/no-newline.txt',
        'src/util.ts',
        'src/view.tsx',
      ].join('\n'),
    );
  });

  test('content mode shows path:line:text', async () => {
    expect(await out({ pattern: 'TODO', output_mode: 'content' })).toBe(
      ['README.md:2:TODO: write docs', 'src/app.ts:4:  // TODO: handle errors'].join('\n'),
    );
  });

  test('content mode without line numbers shows path:text', async () => {
    expect(await out({ pattern: 'TODO', output_mode: 'content', line_numbers: false })).toBe(
      ['README.md:TODO: write docs', 'src/app.ts:  // TODO: handle errors'].join('\n'),
    );
  });

  test('case_insensitive matches regardless of case', async () => {
    expect(await out({ pattern: 'todo', output_mode: 'content', case_insensitive: true })).toBe(
      [
        'README.md:2:TODO: write docs',
        'src/app.ts:4:  // TODO: handle errors',
        'src/app.ts:10:  return helper(2); // todo lower case',
      ].join('\n'),
    );
    expect(await out({ pattern: 'todo', output_mode: 'content' })).toBe(
      'src/app.ts:10:  return helper(2); // todo lower case',
    );
  });

  test('count mode gives matching lines per file', async () => {
    expect(await out({ pattern: 'helper', output_mode: 'count', path: 'src' })).toBe(
      [
        'src/app.ts:3',
        'src/deep/nested/file.js:2',
        'src/long.txt:1',
        'src/no-newline.txt:1',
        'src/util.ts:1',
        'src/view.tsx:1',
      ].join('\n'),
    );
  });

  test('context lines use "-", matches ":", and "--" separates groups; overlapping windows merge', async () => {
    expect(await out({ pattern: 'MATCH', output_mode: 'content', context: 1, path: 'context.txt' })).toBe(
      [
        'context.txt-2-b',
        'context.txt:3:MATCH 1',
        'context.txt-4-c',
        '--',
        'context.txt-7-f',
        'context.txt:8:MATCH 2',
        'context.txt-9-g',
        'context.txt:10:MATCH 3',
        'context.txt-11-h',
      ].join('\n'),
    );
  });

  test('context_before and context_after apply separately', async () => {
    expect(await out({ pattern: 'MATCH 1', output_mode: 'content', context_before: 2, path: 'context.txt' })).toBe(
      ['context.txt-1-a', 'context.txt-2-b', 'context.txt:3:MATCH 1'].join('\n'),
    );
    expect(await out({ pattern: 'MATCH 3', output_mode: 'content', context_after: 5, path: 'context.txt' })).toBe(
      ['context.txt:10:MATCH 3', 'context.txt-11-h', 'context.txt-12-i', 'context.txt-13-j'].join('\n'),
    );
  });

  test('context groups in different files are separated too', async () => {
    expect(await out({ pattern: 'TODO', output_mode: 'content', context_after: 1 })).toBe(
      [
        'README.md:2:TODO: write docs',
        '--',
        'src/app.ts:4:  // TODO: handle errors',
        'src/app.ts-5-  const value = helper(1);',
      ].join('\n'),
    );
  });

  test('glob filters by file name at any depth, by path when it has "/", and "!" excludes', async () => {
    expect(await out({ pattern: 'helper', glob: '*.{ts,tsx}' })).toBe(
      ['.hidden/secret.ts', 'src/app.ts', 'src/util.ts', 'src/view.tsx'].join('\n'),
    );
    expect(await out({ pattern: 'helper', glob: 'src/**/*.js' })).toBe('src/deep/nested/file.js');
    expect(await out({ pattern: 'helper', glob: 'deep/**', path: 'src' })).toBe('src/deep/nested/file.js');
    expect(await out({ pattern: 'helper', glob: '!*.ts', path: 'src' })).toBe(
      ['src/deep/nested/file.js', 'src/long.txt', 'src/no-newline.txt', 'src/view.tsx'].join('\n'),
    );
  });

  test('a file path searches just that file', async () => {
    expect(await out({ pattern: 'return', path: 'src/app.ts', output_mode: 'content' })).toBe(
      ['src/app.ts:6:  return value;', 'src/app.ts:10:  return helper(2); // todo lower case'].join('\n'),
    );
  });

  test('a binary file named directly is skipped with a note', async () => {
    expect(await out({ pattern: 'helper', path: 'data/binary.bin' })).toBe(
      "No matches found for pattern 'helper' in 'data/binary.bin' (it is a binary file and was skipped).",
    );
  });

  test('node_modules is searched when the path is inside it', async () => {
    expect(await out({ pattern: 'helper', path: 'node_modules' })).toBe('node_modules/pkg/index.js');
  });

  test('CRLF: the \\r is not shown, and `$` does not match before it', async () => {
    expect(await out({ pattern: 'end', output_mode: 'content', path: 'src/crlf.txt' })).toBe('src/crlf.txt:1:line end');
    expect(await out({ pattern: 'end$', path: 'src' })).toBe("No matches found for pattern 'end$' in 'src'.");
  });

  test('a last line without a newline is found', async () => {
    expect(await out({ pattern: 'line$', output_mode: 'content', path: 'src/no-newline.txt' })).toBe(
      'src/no-newline.txt:1:last helper line',
    );
  });

  test('unicode paths and text', async () => {
    expect(await out({ pattern: 'Grüße', output_mode: 'content' })).toBe('notes/ünïcödé.txt:1:Grüße helper');
  });

  test('long matching lines are cut', async () => {
    const line = await out({ pattern: 'helper', output_mode: 'content', path: 'src/long.txt' });
    expect(line).toBe(`src/long.txt:1:${'helper '.repeat(200).slice(0, 500)}… [line truncated: 900 more characters]`);
  });

  test('head_limit caps the output with a note saying how many more there are', async () => {
    expect(await out({ pattern: 'helper', head_limit: 2 })).toBe(
      [
        '.hidden/secret.ts',
        'notes/ünïcödé.txt',
        '… 6 more files not shown (8 in total; stopped at head_limit 2). Narrow the search with path, glob or a more specific pattern.',
      ].join('\n'),
    );
    expect(await out({ pattern: 'helper', output_mode: 'content', head_limit: 1, path: 'src/app.ts' })).toBe(
      [
        'src/app.ts:1:import { helper } from "./util";',
        '… 2 more lines not shown (3 in total; stopped at head_limit 1). Narrow the search with path, glob or a more specific pattern.',
      ].join('\n'),
    );
  });

  test('no match is not an error', async () => {
    await expect(grep({ pattern: 'zzz_nothing' })).resolves.toEqual({
      content: "No matches found for pattern 'zzz_nothing' in the workspace root.",
      isError: false,
    });
  });

  test('an invalid regular expression is an error naming the pattern', async () => {
    const result = await grep({ pattern: 'foo(' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('foo(');
  });

  test('a missing path is a clear error', async () => {
    await expect(grep({ pattern: 'x', path: 'nope' })).resolves.toEqual({
      content: "Error: Path not found: 'nope'.",
      isError: true,
    });
  });

  test('an already-cancelled call is reported as cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await registry.run('grep', { pattern: 'helper' }, makeContext(dir, { signal: controller.signal }));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/cancelled/);
  });
});

describe('grep output limits', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();

  beforeAll(() => {
    const files: Record<string, string> = {};
    for (let i = 0; i < GREP_DEFAULT_HEAD_LIMIT + 20; i++) files[`f/${String(i).padStart(5, '0')}.txt`] = 'needle\n';
    files['wide.txt'] = Array.from({ length: 200 }, (_, i) => `needle ${i} ${'w'.repeat(400)}`).join('\n');
    writeTree(dir, files);
  });

  test(`at most ${GREP_DEFAULT_HEAD_LIMIT} entries by default`, async () => {
    const result = await registry.run('grep', { pattern: 'needle', path: 'f' }, makeContext(dir));
    const lines = result.content.split('\n');
    expect(lines).toHaveLength(GREP_DEFAULT_HEAD_LIMIT + 1);
    expect(lines[GREP_DEFAULT_HEAD_LIMIT]).toMatch(
      /^… 20 more files not shown \(1020 in total; stopped at head_limit 1000\)/,
    );
  });

  test('content stops below the output cap with its own note', async () => {
    const result = await registry.run(
      'grep',
      { pattern: 'needle', path: 'wide.txt', output_mode: 'content' },
      makeContext(dir),
    );
    expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    expect(result.content).not.toContain('[Output truncated');
    expect(result.content).toMatch(
      /more lines not shown \(200 in total; stopped at the 30000-character output limit\)/,
    );
  });
});

describe('grep patterns are RE2', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  beforeAll(() => writeTree(dir, { 'a.txt': 'foobar\nfoobaz\nFOO x\n', 'b/c.txt': 'word word\n' }));
  const grep = (input: unknown) => registry.run('grep', input, makeContext(dir));

  test.each([
    ['(a+)+\\1$', 'back-references (\\1) are not supported'],
    ['(?<w>\\w+) \\k<w>', 'back-references (\\k<name>) are not supported'],
    ['foo(?=baz)', 'look-ahead (?=…) is not supported'],
    ['foo(?!bar)', 'negative look-ahead (?!…) is not supported'],
    ['(?<=foo)baz', 'look-behind (?<=…) is not supported'],
    ['(?<!x)baz', 'negative look-behind (?<!…) is not supported'],
    ['(?>foo)', 'atomic groups (?>…) are not supported'],
    ['fo++', 'possessive quantifiers (++) are not supported'],
  ])('%s is refused, naming the construct and RE2', async (pattern, construct) => {
    const result = await grep({ pattern });
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      `Error: The pattern '${pattern}' was refused: ${construct}. grep uses RE2 regular-expression syntax (as ` +
        'ripgrep and Go do), which matches in linear time and has no back-references, look-ahead, look-behind, ' +
        'atomic groups or possessive quantifiers.',
    );
  });

  test("a malformed pattern is an error with RE2's reason", async () => {
    const result = await grep({ pattern: 'a{2,1}' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Error: Invalid pattern 'a\{2,1\}': .*RE2 regular-expression syntax/);
  });

  test('an over-long pattern or glob filter is refused', async () => {
    for (const input of [{ pattern: 'a'.repeat(4097) }, { pattern: 'foo', glob: '*'.repeat(4097) }]) {
      const result = await grep(input);
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^Error: Invalid input for tool 'grep':\n- (pattern|glob): Too big/);
    }
  });

  test('what JavaScript and RE2 share works: classes, \\b, \\d, alternation, case-insensitive, named groups', async () => {
    const out = async (input: Record<string, unknown>) => (await grep({ output_mode: 'content', ...input })).content;
    expect(await out({ pattern: '\\bfoo(bar|baz)$' })).toBe('a.txt:1:foobar\na.txt:2:foobaz');
    expect(await out({ pattern: 'foo x', case_insensitive: true })).toBe('a.txt:3:FOO x');
    expect(await out({ pattern: '(?<w>wo)rd\\s' })).toBe('b/c.txt:1:word word');
    expect(await out({ pattern: '(?i)foo\\s' })).toBe('a.txt:3:FOO x');
    expect(await out({ pattern: '\\Afoo' })).toBe('a.txt:1:foobar\na.txt:2:foobaz');
  });
});

describe('grep keeps a bounded number of matching files', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const extra = 5;
  beforeAll(() => {
    const files: Record<string, string> = {};
    for (let i = 0; i < GREP_MAX_FILE_HITS + extra; i++)
      files[`d${i % 100}/f${String(i).padStart(5, '0')}.txt`] = 'x\n';
    writeTree(dir, files);
  });

  test('the search thread sends at most GREP_MAX_FILE_HITS files, in path order, and counts the rest', () => {
    const query = {
      pattern: 'x',
      caseInsensitive: false,
      before: 0,
      after: 0,
      root: dir,
      base: dir,
      baseIsFile: false,
    };
    for (const mode of ['files_with_matches', 'count'] as const) {
      const result = runGrep({ ...query, mode });
      expect(result.hits).toHaveLength(GREP_MAX_FILE_HITS);
      expect(result.filesNotKept).toBe(extra);
      expect(result.hits[0]?.path).toBe('d0/f00000.txt');
    }
  });

  test('the answer still gives the total', async () => {
    const result = await createDefaultRegistry().run('grep', { pattern: 'x' }, makeContext(dir));
    const total = GREP_MAX_FILE_HITS + extra;
    expect(result.content).toMatch(new RegExp(`more files not shown \\(${total} in total; stopped at `));
  });
});
