import { linkSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_SYSTEM_PROMPT_BYTES } from '../../src/shared';
import { MAX_SOUL_BYTES, MAX_TOOL_NOTES_BYTES } from '../../src/context/limits';
import { utf8Length } from '../../src/context/text';
import { assemble, headingPositions, link, makeRepo, writeTree } from './helpers';

/**
 * SOUL.md and TOOLS.md at the workspace root: SOUL.md opens the system layer (before AGENTS.md),
 * TOOLS.md closes the tools part; each is read through the same safe layer and ownership rules as
 * every context file, capped, marked when cut, and reported in `sources` and `warnings`. Real
 * temporary workspaces inside a repository.
 */
let repo: ReturnType<typeof makeRepo>;
beforeEach(() => {
  repo = makeRepo();
});
afterEach(() => repo.cleanup());

const SOUL = 'You are terse and precise. You never guess a fact you can check.';
const TOOLS = 'Run the tests with `make check`, never `npm test`: it needs the database up.';

test('SOUL.md comes before AGENTS.md, TOOLS.md right after the tool lines, each reported as a source', async () => {
  writeTree(repo.ws, { 'SOUL.md': `${SOUL}\n`, 'AGENTS.md': 'Use pnpm.\n', 'TOOLS.md': `${TOOLS}\n` });
  const ctx = await assemble(repo.ws, { systemPrompt: 'Answer in French.' });
  const titles = [
    'Identity',
    'Soul (SOUL.md)',
    'Project instructions (AGENTS.md)',
    'Environment',
    'Long-term memory',
    'Tools',
    'Workspace notes on the tools (TOOLS.md)',
    'User instructions',
  ];
  const positions = headingPositions(ctx.system, titles);
  expect(positions.every((p) => p >= 0)).toBe(true);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  expect(ctx.system).toContain(`# Soul (SOUL.md)\n\n${SOUL}\n\n# Project instructions (AGENTS.md)`);
  // A sub-part of the tools part, after the tool lines and their rules.
  expect(ctx.system).toContain(`\n\n## Workspace notes on the tools (TOOLS.md)\n\n${TOOLS}\n\n# User instructions`);
  expect(ctx.sources.map((s) => s.title)).toEqual(titles);
  expect(ctx.sources.filter((s) => s.path === 'SOUL.md' || s.path === 'TOOLS.md')).toEqual([
    { kind: 'instructions', title: 'Soul (SOUL.md)', path: 'SOUL.md', bytes: expect.any(Number) },
    {
      kind: 'instructions',
      title: 'Workspace notes on the tools (TOOLS.md)',
      path: 'TOOLS.md',
      bytes: expect.any(Number),
    },
  ]);
  expect(ctx.warnings).toEqual([]);
  const sum = ctx.sources.reduce((total, s) => total + s.bytes, 0) + 2 * (ctx.sources.length - 1);
  expect(sum).toBe(utf8Length(ctx.system));
});

test('without the files, or with blank ones, the prompt is as before', async () => {
  const before = await assemble(repo.ws);
  writeTree(repo.ws, { 'SOUL.md': '\n  \n', 'TOOLS.md': '' });
  const blank = await assemble(repo.ws);
  expect(blank.system).toBe(before.system);
  expect(blank.system).not.toMatch(/SOUL\.md|TOOLS\.md/);
});

test('over its cap each file is cut at a line end, marked, flagged truncated and warned about', async () => {
  const line = 'x'.repeat(99);
  writeTree(repo.ws, {
    'SOUL.md': `${line}\n`.repeat(Math.ceil((2 * MAX_SOUL_BYTES) / 100)),
    'TOOLS.md': `${line}\n`.repeat(Math.ceil((2 * MAX_TOOL_NOTES_BYTES) / 100)),
  });
  const ctx = await assemble(repo.ws);
  for (const [name, cap] of [
    ['SOUL.md', MAX_SOUL_BYTES],
    ['TOOLS.md', MAX_TOOL_NOTES_BYTES],
  ] as const) {
    const source = ctx.sources.find((s) => s.path === name)!;
    expect(source.truncated).toBe(true);
    expect(source.bytes).toBeLessThan(cap + 300);
    expect(ctx.system).toMatch(
      new RegExp(`x\\n\\[… ${name.replace('.', '\\.')} is [\\d,]+ bytes; only the start is shown`),
    );
    expect(ctx.warnings).toContainEqual(
      expect.stringMatching(new RegExp(`^${name.replace('.', '\\.')} cut to its first`)),
    );
  }
  expect(utf8Length(ctx.system)).toBeLessThanOrEqual(MAX_SYSTEM_PROMPT_BYTES);
});

test('a link out of the workspace or a hard link is refused with a warning, never read', async () => {
  const secret = path.join(repo.root, 'outside', 'secret.md');
  writeTree(path.dirname(secret), { 'secret.md': 'OUTSIDE SECRET\n', 'notes.md': 'HARD LINKED\n' });
  link(secret, path.join(repo.ws, 'SOUL.md'));
  linkSync(path.join(repo.root, 'outside', 'notes.md'), path.join(repo.ws, 'TOOLS.md'));
  const ctx = await assemble(repo.ws);
  expect(ctx.system).not.toContain('OUTSIDE SECRET');
  expect(ctx.system).not.toContain('HARD LINKED');
  expect(ctx.sources.filter((s) => s.path === 'SOUL.md' || s.path === 'TOOLS.md')).toEqual([]);
  expect(ctx.warnings).toEqual([
    expect.stringMatching(/^SOUL\.md not read: .*is outside the workspace/),
    expect.stringMatching(/^TOOLS\.md not read: it is a hard link \(2 names\)/),
  ]);
});

test('a link inside the workspace is followed, as for the other context files', async () => {
  writeTree(repo.ws, { 'docs/soul.md': `${SOUL}\n` });
  link('docs/soul.md', path.join(repo.ws, 'SOUL.md'));
  const ctx = await assemble(repo.ws);
  expect(ctx.system).toContain(`# Soul (SOUL.md)\n\n${SOUL}`);
});

test('systemReplace reads neither; a run offered no tools is not shown TOOLS.md, and is told why', async () => {
  writeTree(repo.ws, { 'SOUL.md': `${SOUL}\n`, 'TOOLS.md': `${TOOLS}\n` });
  const replaced = await assemble(repo.ws, { systemPrompt: 'Only this.', systemReplace: true });
  expect(replaced.system).toBe('Only this.');
  const toolless = await assemble(repo.ws, { toolNames: [] });
  expect(toolless.system).toContain(SOUL);
  expect(toolless.system).not.toContain(TOOLS);
  expect(toolless.warnings).toEqual(['TOOLS.md not shown: the run offers no tools']);
});

test('when the whole is over the cap, TOOLS.md goes before AGENTS.md, and SOUL.md last of the files', async () => {
  const block = (c: string, bytes: number) => `${c.repeat(99)}\n`.repeat(Math.floor(bytes / 100));
  writeTree(repo.ws, {
    'SOUL.md': block('s', MAX_SOUL_BYTES - 200),
    'AGENTS.md': block('a', 30 * 1024),
    'TOOLS.md': block('t', MAX_TOOL_NOTES_BYTES - 200),
  });
  const user = 'u'.repeat(MAX_SYSTEM_PROMPT_BYTES - 36 * 1024);
  const ctx = await assemble(repo.ws, { systemPrompt: user });
  expect(utf8Length(ctx.system)).toBeLessThanOrEqual(MAX_SYSTEM_PROMPT_BYTES);
  expect(ctx.system).toContain(user);
  const source = (name: string) => ctx.sources.find((s) => s.path === name);
  expect(source('TOOLS.md')).toBeUndefined();
  expect(source('SOUL.md')?.truncated).toBeUndefined();
  expect(ctx.warnings).toContainEqual(expect.stringMatching(/^TOOLS\.md left out: the system prompt is capped/));
});
