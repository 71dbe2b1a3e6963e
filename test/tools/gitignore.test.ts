/**
 * glob and grep skip what `.gitignore` excludes, as git and ripgrep do, unless `include_ignored` is
 * set: nested files, `.git/info/exclude`, negation, directory-only and anchored patterns. The files
 * are the model's to write, so hostile ones (catastrophic patterns, too many, symlinked) are bounded.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createDefaultRegistry } from '../../src/tools';
import { parseIgnoreLine } from '../../src/tools/search/gitignore';
import { GITIGNORE_MAX_PATTERNS_PER_FILE } from '../../src/tools/search/limits';
import { makeContext, makeTempDir, writeTree } from './helpers';

jest.setTimeout(60_000);

const registry = createDefaultRegistry();

function tools(dir: string) {
  const ctx = makeContext(dir);
  const text = async (name: string, input: unknown) => {
    const result = await registry.run(name, input, ctx);
    expect(result.isError).toBeFalsy();
    return typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
  };
  return {
    glob: (input: Record<string, unknown>) => text('glob', input),
    grep: (input: Record<string, unknown>) => text('grep', input),
  };
}

describe('a repository with build output', () => {
  const { dir, cleanup } = makeTempDir('da-gitignore-');
  afterAll(cleanup);
  beforeAll(() => {
    writeTree(dir, {
      '.gitignore': '# build output\ndist/\n*.log\n/coverage\n!keep.log\ncache/**/*.tmp\n',
      '.git/info/exclude': 'local-notes.ts\n',
      'src/a.ts': 'export const needle = 1;\n',
      'src/b.ts': 'needle\n',
      'src/debug.log': 'needle\n',
      'src/keep.log': 'needle\n',
      'src/local-notes.ts': 'needle\n',
      'src/coverage/c.ts': 'needle\n', // `/coverage` is anchored to the root: this one stays
      'coverage/lcov.ts': 'needle\n',
      'dist/a.js': 'needle\n',
      'dist/types/a.d.ts': 'needle\n',
      'packages/p/.gitignore': 'generated/\n!important.log\n',
      'packages/p/index.ts': 'needle\n',
      'packages/p/important.log': 'needle\n',
      'packages/p/generated/g.ts': 'needle\n',
      'packages/q/generated/g.ts': 'needle\n', // the nested rule is p's only
      'cache/x/y.tmp': 'needle\n',
      'cache/x/y.ts': 'needle\n',
      'weird/{braces},x.ts': 'needle\n',
    });
    writeFileSync(path.join(dir, 'weird/.gitignore'), '{braces},x.ts\n');
  });

  const kept = [
    'cache/x/y.ts',
    'packages/p/important.log',
    'packages/p/index.ts',
    'packages/q/generated/g.ts',
    'src/a.ts',
    'src/b.ts',
    'src/coverage/c.ts',
    'src/keep.log',
  ];

  test('glob skips what .gitignore, nested .gitignore files and .git/info/exclude exclude', async () => {
    const { glob } = tools(dir);
    expect((await glob({ pattern: '**/*' })).split('\n')).toEqual(
      [...kept.slice(0, 5), '.gitignore', 'packages/p/.gitignore', ...kept.slice(5), 'weird/.gitignore'].sort(),
    );
  });

  test('include_ignored lists everything; naming an ignored directory searches it', async () => {
    const { glob } = tools(dir);
    const all = (await glob({ pattern: '**/*.ts', include_ignored: true })).split('\n');
    expect(all).toEqual(
      expect.arrayContaining(['dist/types/a.d.ts', 'coverage/lcov.ts', 'src/local-notes.ts', 'weird/{braces},x.ts']),
    );
    expect(await glob({ pattern: 'dist/**/*.ts' })).toBe('dist/types/a.d.ts');
    expect(await glob({ pattern: '*.js', path: 'dist' })).toBe('dist/a.js');
  });

  test('nothing matched because of .gitignore: the answer says how to include ignored files', async () => {
    const { glob } = tools(dir);
    expect(await glob({ pattern: '**/*.js' })).toMatch(/^No files match '\*\*\/\*\.js'.*include_ignored/);
  });

  test('grep skips the same files, and searches them with include_ignored', async () => {
    const { grep } = tools(dir);
    expect((await grep({ pattern: 'needle' })).split('\n')).toEqual(kept);
    const all = (await grep({ pattern: 'needle', include_ignored: true })).split('\n');
    expect(all).toHaveLength(16);
    // A path that names an ignored file is searched.
    expect(await grep({ pattern: 'needle', path: 'dist/a.js' })).toBe('dist/a.js');
  });
});

test('gitignore lines: comments, escapes, trailing spaces, negation, directory-only, anchoring', () => {
  expect(parseIgnoreLine('# comment')).toBeUndefined();
  expect(parseIgnoreLine('   ')).toBeUndefined();
  expect(parseIgnoreLine('\\#file')).toEqual({ glob: '**/\\#file', negate: false, dirOnly: false });
  expect(parseIgnoreLine('build/  ')).toEqual({ glob: '**/build', negate: false, dirOnly: true });
  expect(parseIgnoreLine('!/src/*.ts\r')).toEqual({ glob: 'src/*.ts', negate: true, dirOnly: false });
  expect(parseIgnoreLine('a/**/b')).toEqual({ glob: 'a/**/b', negate: false, dirOnly: false });
  expect(parseIgnoreLine('{x,y}')).toEqual({ glob: '**/\\{x\\,y\\}', negate: false, dirOnly: false });
});

describe('hostile ignore files', () => {
  const { dir, cleanup } = makeTempDir('da-gitignore-hostile-');
  const outside = makeTempDir('da-gitignore-outside-');
  afterAll(() => {
    cleanup();
    outside.cleanup();
  });

  test('a pattern that backtracks, on long names, matches in linear time', async () => {
    const name = `${'a'.repeat(200)}.txt`;
    writeTree(dir, { '.gitignore': `${'*a'.repeat(60)}*b\n`, [`long/${name}`]: 'x', 'long/other.txt': 'x' });
    for (let i = 0; i < 50; i++) writeFileSync(path.join(dir, 'long', `${'a'.repeat(150 + i)}.txt`), 'x');
    const started = Date.now();
    const listed = (await tools(dir).glob({ pattern: 'long/*.txt' })).split('\n');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(listed).toHaveLength(52);
  });

  test('too many patterns: the first ones apply and the answer says so', async () => {
    const lines = Array.from({ length: GITIGNORE_MAX_PATTERNS_PER_FILE + 500 }, (_, i) => `never-${i}`);
    writeTree(dir, { 'many/.gitignore': `${lines.join('\n')}\nskipped.txt\n`, 'many/skipped.txt': 'x' });
    const answer = await tools(dir).glob({ pattern: 'many/*.txt' });
    expect(answer).toContain('many/skipped.txt');
    expect(answer).toContain(
      `Only the first ${GITIGNORE_MAX_PATTERNS_PER_FILE} patterns of many/.gitignore were applied`,
    );
  });

  test('a .gitignore that is a symlink to a file outside is not read', async () => {
    writeFileSync(path.join(outside.dir, 'rules'), '*.txt\n');
    mkdirSync(path.join(dir, 'linked'));
    writeFileSync(path.join(dir, 'linked', 'seen.txt'), 'x');
    symlinkSync(path.join(outside.dir, 'rules'), path.join(dir, 'linked', '.gitignore'));
    expect(await tools(dir).glob({ pattern: 'linked/*.txt' })).toBe('linked/seen.txt');
  });
});
