import { mkdirSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry, globToRegExp } from '../../src/tools';
import { compilePathFilter } from '../../src/tools/search/glob-pattern';
import { GLOB_MAX_RESULTS } from '../../src/tools/glob';
import { makeContext, makeTempDir, writeTree } from './helpers';

describe('globToRegExp', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['*.ts', ['a.ts', '.hidden.ts', 'x.y.ts'], ['a.tsx', 'src/a.ts', 'a.ts/b']],
    ['src/*.ts', ['src/a.ts'], ['src/x/a.ts', 'a.ts']],
    ['**/*.ts', ['a.ts', 'src/a.ts', 'src/deep/er/a.ts'], ['a.js', 'src/a.tsx']],
    ['src/**/*.ts', ['src/a.ts', 'src/x/y/a.ts'], ['a.ts', 'srcx/a.ts', 'lib/src/a.ts']],
    ['src/**', ['src/a', 'src/x/y'], ['src', 'srcx/a']],
    ['a/**/b/*.md', ['a/b/x.md', 'a/1/2/b/x.md'], ['a/b/c/x.md', 'ab/x.md']],
    ['?.txt', ['a.txt', '1.txt'], ['ab.txt', '.txt', '/.txt']],
    ['*.{js,jsx}', ['a.js', 'a.jsx'], ['a.j', 'a.ts', 'a.{js,jsx}']],
    ['{src,test}/**/*.{ts,tsx}', ['src/a.ts', 'test/x/a.tsx'], ['lib/a.ts', 'src/a.js']],
    ['{a,{b,c}d}.txt', ['a.txt', 'bd.txt', 'cd.txt'], ['b.txt', 'd.txt']],
    ['{*.md,docs/**}', ['README.md', 'docs/x/y.txt'], ['src/README.md']],
    ['[abc].txt', ['a.txt', 'c.txt'], ['d.txt', 'ab.txt']],
    ['[a-c]x', ['bx'], ['dx', '-x']],
    ['[!a-c]x', ['dx', '-x'], ['ax', '/x']],
    ['[^a]x', ['bx'], ['ax']],
    ['[]]x', [']x'], ['x']],
    ['file[.txt', ['file[.txt'], ['file.txt']],
    ['{unclosed', ['{unclosed'], ['unclosed']],
    ['{{a,b}', ['{a', '{b'], ['a', '{{a,b}']],
    ['{a,{b}x', ['{a,bx'], ['ax', 'bx']],
    ['{a,[}]}x', ['ax', '}x'], ['a,x']],
    ['a}b,c', ['a}b,c'], []],
    ['a\\*b', ['a*b'], ['axb']],
    ['a+b(c).txt', ['a+b(c).txt'], ['aab(c).txt', 'a+bc.txt']],
    ['**', ['a', 'a/b/c', '.git/x'], []],
    ['x**y', ['xy', 'xaay'], ['xa/y']],
  ];
  test.each(cases)('%s', (glob, matches, nonMatches) => {
    const re = globToRegExp(glob);
    for (const p of matches) expect([p, re.test(p)]).toEqual([p, true]);
    for (const p of nonMatches) expect([p, re.test(p)]).toEqual([p, false]);
  });

  test('a path filter without "/" matches the base name at any depth', () => {
    const filter = compilePathFilter('*.ts');
    expect(filter('a.ts')).toBe(true);
    expect(filter('src/deep/a.ts')).toBe(true);
    expect(filter('src/a.js')).toBe(false);
    const anchored = compilePathFilter('src/*.ts');
    expect(anchored('src/a.ts')).toBe(true);
    expect(anchored('lib/src/a.ts')).toBe(false);
  });
});

describe('glob tool', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = createDefaultRegistry();
  const glob = (input: unknown) => registry.run('glob', input, makeContext(dir));

  beforeAll(() => {
    writeTree(dir, {
      'README.md': '',
      'b.ts': '',
      'a.ts': '',
      'Z.ts': '',
      '.hidden.ts': '',
      'src/index.ts': '',
      'src/util/strings.ts': '',
      'src/util/strings.test.ts': '',
      'src/component.tsx': '',
      'src/deep/a/b/c/d.ts': '',
      'node_modules/pkg/index.ts': '',
      'node_modules/pkg/readme.md': '',
      '.git/config': '',
      '.git/hooks/x.ts': '',
      'lib/node_modules/nested.ts': '',
    });
    mkdirSync(path.join(dir, 'empty-dir.ts'));
    symlinkSync(path.join(dir, 'src'), path.join(dir, 'src-link'));
    symlinkSync(path.join(dir, 'a.ts'), path.join(dir, 'link.ts'));
    for (let i = 0; i < 1005; i++) writeTree(dir, { [`many/f${String(i).padStart(4, '0')}.txt`]: '' });
  });

  test('** finds files at any depth, sorted by path, skipping .git and node_modules', async () => {
    const result = await glob({ pattern: '**/*.ts' });
    expect(result).toEqual({
      content: [
        '.hidden.ts',
        'Z.ts',
        'a.ts',
        'b.ts',
        'src/deep/a/b/c/d.ts',
        'src/index.ts',
        'src/util/strings.test.ts',
        'src/util/strings.ts',
      ].join('\n'),
      isError: false,
    });
  });

  test('a pattern without ** matches only at its own level', async () => {
    expect((await glob({ pattern: '*.ts' })).content).toBe(['.hidden.ts', 'Z.ts', 'a.ts', 'b.ts'].join('\n'));
    expect((await glob({ pattern: 'src/*.{ts,tsx}' })).content).toBe(['src/component.tsx', 'src/index.ts'].join('\n'));
  });

  test('path narrows the search and results stay relative to the workspace', async () => {
    expect((await glob({ pattern: '**/*.ts', path: 'src/util' })).content).toBe(
      ['src/util/strings.test.ts', 'src/util/strings.ts'].join('\n'),
    );
    expect((await glob({ pattern: '*.ts', path: path.join(dir, 'src') })).content).toBe('src/index.ts');
  });

  test('an absolute pattern inside the workspace works', async () => {
    expect((await glob({ pattern: path.join(dir, 'src', '*.ts') })).content).toBe('src/index.ts');
  });

  test('a literal file path matches itself', async () => {
    expect((await glob({ pattern: 'src/util/strings.ts' })).content).toBe('src/util/strings.ts');
  });

  test('node_modules and .git are searched when the pattern names them', async () => {
    expect((await glob({ pattern: 'node_modules/**/*.ts' })).content).toBe('node_modules/pkg/index.ts');
    expect((await glob({ pattern: '**/node_modules/**/*.ts' })).content).toBe(
      ['lib/node_modules/nested.ts', 'node_modules/pkg/index.ts'].join('\n'),
    );
    expect((await glob({ pattern: '.git/*' })).content).toBe('.git/config');
  });

  test('directories and symlinks are not listed', async () => {
    const all = (await glob({ pattern: '**' })).content.split('\n');
    expect(all).not.toContain('empty-dir.ts');
    expect(all).not.toContain('link.ts');
    expect(all.some((p) => p.startsWith('src-link/'))).toBe(false);
  });

  test('results are capped with a note saying how many more there are', async () => {
    const result = await glob({ pattern: 'many/*.txt' });
    const lines = result.content.split('\n');
    expect(lines).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(lines[0]).toBe('many/f0000.txt');
    expect(lines[GLOB_MAX_RESULTS - 1]).toBe('many/f0999.txt');
    expect(lines[GLOB_MAX_RESULTS]).toBe(
      `… and 5 more files (1005 matches in total; only the first ${GLOB_MAX_RESULTS} in sorted order are listed). ` +
        'Use a narrower pattern or path.',
    );
  });

  test('no match is not an error', async () => {
    await expect(glob({ pattern: '**/*.rs' })).resolves.toEqual({
      content: "No files match '**/*.rs' in the workspace root.",
      isError: false,
    });
  });

  test('a missing or non-directory path is a clear error', async () => {
    await expect(glob({ pattern: '*', path: 'nope' })).resolves.toEqual({
      content: "Error: Directory not found: 'nope'.",
      isError: true,
    });
    await expect(glob({ pattern: '*', path: 'a.ts' })).resolves.toEqual({
      content: "Error: 'a.ts' is not a directory; path must name a directory.",
      isError: true,
    });
  });

  test('an aborted call is reported as cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await registry.run('glob', { pattern: '**' }, makeContext(dir, { signal: controller.signal }));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/cancelled/);
  });
});

/**
 * Whether a `{` opens a group used to be decided by trying it and, when no `}` closed it, trying the
 * next `{` from scratch: time exponential in the number of unclosed `{` (30 of them: a minute).
 */
describe('glob patterns with many braces compile in linear time', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  // The glob option reaches the tool: with the old compiler this call ends at the deadline instead.
  const registry = createDefaultRegistry({ glob: { deadlineMs: 10_000 } });

  test('a name of 200 unclosed `{` is found by itself as a pattern', async () => {
    const name = `${'{'.repeat(200)}x`;
    writeTree(dir, { [name]: '', x: '' });
    const result = await registry.run('glob', { pattern: name }, makeContext(dir));
    expect(result).toEqual({ content: name, isError: false });
  });

  test('4,096 characters of `{`, `{,`, `[{` or `{a,` are patterns like any other', async () => {
    for (const pattern of ['{'.repeat(4096), '{,'.repeat(2048), '[{'.repeat(2048), '{a,'.repeat(1365)]) {
      const result = await registry.run('glob', { pattern }, makeContext(dir));
      expect(result).toEqual({ content: `No files match '${pattern}' in the workspace root.`, isError: false });
    }
  });

  test('the tool options reach glob: a 1 ms deadline stops it', async () => {
    // Walking 2,000 files in 200 folders takes far longer than 1 ms.
    for (let i = 0; i < 2000; i++) writeTree(dir, { [`tree/d${i % 200}/f${i}.txt`]: '' });
    const stopped = createDefaultRegistry({ glob: { deadlineMs: 1 } });
    const result = await stopped.run('glob', { pattern: '**' }, makeContext(dir));
    expect(result).toEqual({
      content:
        'Error: glob was stopped after 1 ms, its time limit, before it finished. Search a smaller part of the ' +
        'workspace (path, glob) or use a more specific pattern.',
      isError: true,
    });
  });
});
