import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { absentFrom, listTop, readCapped } from '../../src/context/workspace-files';
import { assemble, makeTempDir, writeTree } from './helpers';

/**
 * Run start lists the workspace's top names once, so the context files that are not there cost no
 * walk. The listing may only make a read skip what is missing: every file there is still found
 * (whatever the case of its first component on a case-insensitive file system), and a folder too
 * large to list falls back to walking each path. Real temporary folders.
 */
let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir('da-top-');
});
afterEach(() => tmp.cleanup());

test('absentFrom: only a first component missing from the listing counts as absent', () => {
  const top = new Set(['memory.md', 'skills', '.claude']);
  expect(absentFrom(undefined, 'MEMORY.md')).toBe(false);
  expect(absentFrom(top, 'MEMORY.md')).toBe(false);
  expect(absentFrom(top, 'memory.md')).toBe(false);
  expect(absentFrom(top, './skills/a/SKILL.md')).toBe(false);
  expect(absentFrom(top, '.claude/skills')).toBe(false);
  expect(absentFrom(top, 'SOUL.md')).toBe(true);
  expect(absentFrom(top, '.durable-agent/skills')).toBe(true);
  // Never decided by the listing: the walk judges these.
  expect(absentFrom(top, '../outside.md')).toBe(false);
  expect(absentFrom(top, '.')).toBe(false);
  expect(absentFrom(top, '')).toBe(false);
});

test('listTop: the names of the folder, lower-cased; undefined when it cannot be listed or is too large', async () => {
  writeTree(tmp.dir, { 'MEMORY.md': 'x', 'skills/a/SKILL.md': 'y' });
  expect(await listTop(tmp.dir)).toEqual(new Set(['memory.md', 'skills']));
  expect(await listTop(path.join(tmp.dir, 'missing'))).toBeUndefined();
  expect(await listTop(path.join(tmp.dir, 'MEMORY.md'))).toBeUndefined();

  const big = path.join(tmp.dir, 'big');
  mkdirSync(big);
  for (let i = 0; i <= 4096; i++) writeFileSync(path.join(big, `f${i}`), '');
  expect(await listTop(big)).toBeUndefined();
});

test('readCapped with a listing: a file not listed is missing without a walk, a listed one is read', async () => {
  writeTree(tmp.dir, { 'MEMORY.md': 'remember this' });
  const top = await listTop(tmp.dir);
  // Created after the listing: treated as created after the read.
  writeFileSync(path.join(tmp.dir, 'SOUL.md'), 'late');
  expect(await readCapped(tmp.dir, 'SOUL.md', 100, undefined, top)).toEqual({ kind: 'missing' });
  expect(await readCapped(tmp.dir, 'SOUL.md', 100)).toMatchObject({ kind: 'ok', text: 'late' });
  expect(await readCapped(tmp.dir, 'MEMORY.md', 100, undefined, top)).toMatchObject({
    kind: 'ok',
    text: 'remember this',
  });
});

test('the assembled prompt still holds every context file that is there', async () => {
  writeTree(tmp.dir, {
    'SOUL.md': 'Terse.',
    'AGENTS.md': 'Use pnpm.',
    'MEMORY.md': 'The build needs Go.',
    'TOOLS.md': 'make check',
    '.claude/skills/pdf/SKILL.md': '---\nname: pdf\ndescription: Fill in PDF forms\n---\n',
  });
  const ctx = await assemble(tmp.dir);
  expect(ctx.sources.map((s) => s.path).filter(Boolean)).toEqual(['SOUL.md', 'AGENTS.md', 'MEMORY.md', 'TOOLS.md']);
  expect(ctx.skills.map((s) => s.name)).toEqual(['pdf']);
  expect(ctx.warnings).toEqual([]);
});
