import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_INSTRUCTION_FILE_BYTES, MAX_INSTRUCTIONS_TOTAL_BYTES, instructionFolders } from '../../src/context';
import { utf8Length } from '../../src/shared/bounds';
import { assemble, link, makeRepo, makeTempDir, writeTree } from './helpers';

let repo: ReturnType<typeof makeRepo>;
beforeEach(() => {
  repo = makeRepo();
});
afterEach(() => repo.cleanup());

const instructionSources = (ctx: Awaited<ReturnType<typeof assemble>>) =>
  ctx.sources.filter((s) => s.kind === 'instructions');

describe('instruction files', () => {
  test('nearest first: the workspace file, then the folders above it up to the one holding .git', async () => {
    writeTree(repo.root, { 'AGENTS.md': 'ABOVE THE REPOSITORY\n' });
    writeTree(repo.repo, { 'AGENTS.md': 'repository rules\n' });
    writeTree(repo.ws, { 'AGENTS.md': 'package rules\n' });
    expect(await instructionFolders(repo.ws)).toEqual([repo.ws, repo.repo]);
    const ctx = await assemble(repo.ws);
    expect(instructionSources(ctx).map((s) => s.path)).toEqual(['AGENTS.md', path.join(repo.repo, 'AGENTS.md')]);
    expect(ctx.system.indexOf('package rules')).toBeLessThan(ctx.system.indexOf('repository rules'));
    expect(ctx.system).not.toContain('ABOVE THE REPOSITORY');
  });

  test('a .git file (a worktree or submodule) is a boundary too', async () => {
    writeTree(repo.ws, { '.git': 'gitdir: ../.git/worktrees/pkg\n', 'AGENTS.md': 'package rules\n' });
    writeTree(repo.repo, { 'AGENTS.md': 'repository rules\n' });
    const ctx = await assemble(repo.ws);
    expect(ctx.system).toContain('package rules');
    expect(ctx.system).not.toContain('repository rules');
  });

  test('without a .git above, only the workspace is searched (a stray AGENTS.md in a parent is never read)', async () => {
    const { dir, cleanup } = makeTempDir('da-context-nogit-');
    try {
      const ws = path.join(dir, 'ws');
      writeTree(dir, { 'AGENTS.md': 'PLANTED IN THE PARENT\n', 'ws/AGENTS.md': 'workspace rules\n' });
      expect(await instructionFolders(ws)).toEqual([ws]);
      const ctx = await assemble(ws);
      expect(ctx.system).toContain('workspace rules');
      expect(ctx.system).not.toContain('PLANTED IN THE PARENT');
    } finally {
      cleanup();
    }
  });

  test('CLAUDE.md is read where a folder has no AGENTS.md', async () => {
    writeTree(repo.ws, { 'CLAUDE.md': 'claude rules\n' });
    writeTree(repo.repo, { 'AGENTS.md': 'repository rules\n' });
    const ctx = await assemble(repo.ws);
    expect(instructionSources(ctx).map((s) => s.path)).toEqual(['CLAUDE.md', path.join(repo.repo, 'AGENTS.md')]);
    expect(ctx.system).toContain('# Project instructions (CLAUDE.md)\n\nclaude rules');
    expect(ctx.warnings).toEqual([]);
  });

  test('with both in one folder AGENTS.md wins; a different CLAUDE.md is named in a warning, a link to it is not', async () => {
    writeTree(repo.ws, { 'AGENTS.md': 'agents rules\n', 'CLAUDE.md': 'other claude rules\n' });
    const ctx = await assemble(repo.ws);
    expect(ctx.system).toContain('agents rules');
    expect(ctx.system).not.toContain('other claude rules');
    expect(ctx.warnings).toEqual(['CLAUDE.md not read: AGENTS.md in the same folder is used instead']);

    writeTree(repo.repo, { 'AGENTS.md': 'repository rules\n' });
    link('AGENTS.md', path.join(repo.repo, 'CLAUDE.md'));
    const again = await assemble(repo.ws);
    expect(again.warnings).toEqual(['CLAUDE.md not read: AGENTS.md in the same folder is used instead']);
    expect(again.system.split('repository rules').length).toBe(2); // once
  });

  test('a file over its cap is cut at a line, marked, flagged truncated and reported', async () => {
    const line = 'Always write a test for each change you make.\n';
    const text = line.repeat(Math.ceil((MAX_INSTRUCTION_FILE_BYTES * 1.5) / line.length));
    writeTree(repo.ws, { 'AGENTS.md': text });
    const ctx = await assemble(repo.ws);
    const [source] = instructionSources(ctx);
    expect(source).toMatchObject({ path: 'AGENTS.md', truncated: true });
    expect(source!.bytes).toBeLessThanOrEqual(MAX_INSTRUCTION_FILE_BYTES + 512);
    const body = ctx.system.slice(ctx.system.indexOf('# Project instructions (AGENTS.md)'));
    expect(body).toContain(
      `${line}[… AGENTS.md is ${utf8Length(text).toLocaleString('en-US')} bytes; only the start is shown (read the rest with read_file)]`,
    );
    expect(ctx.warnings).toEqual([
      `AGENTS.md cut to its first 32,768 bytes of ${utf8Length(text).toLocaleString('en-US')} bytes`,
    ]);
  });

  test('the total is capped: the nearest file takes the budget first, the next gets what is left', async () => {
    const near = 'n'.repeat(MAX_INSTRUCTIONS_TOTAL_BYTES - 1000);
    writeTree(repo.ws, { 'AGENTS.md': near });
    writeTree(repo.repo, { 'AGENTS.md': 'f'.repeat(5000) });
    const ctx = await assemble(repo.ws);
    const [first, second] = instructionSources(ctx);
    expect(first).toMatchObject({ path: 'AGENTS.md' });
    expect(first!.truncated).toBeUndefined();
    expect(second).toMatchObject({ path: path.join(repo.repo, 'AGENTS.md'), truncated: true });
    expect(ctx.system).toContain('f'.repeat(1000));
    expect(ctx.system).not.toContain('f'.repeat(1001));

    writeFileSync(path.join(repo.ws, 'AGENTS.md'), 'n'.repeat(MAX_INSTRUCTIONS_TOTAL_BYTES + 10));
    const full = await assemble(repo.ws);
    expect(instructionSources(full).map((s) => s.path)).toEqual(['AGENTS.md']);
    expect(full.warnings).toContain(
      `${path.join(repo.repo, 'AGENTS.md')} not read: the instruction files before it used the 32,768 bytes`,
    );
  });

  test('a binary file and a FIFO are refused with a warning, and do not block', async () => {
    writeTree(repo.ws, { 'AGENTS.md': Buffer.from([0x61, 0x00, 0x62]) });
    execFileSync('mkfifo', [path.join(repo.repo, 'AGENTS.md')]);
    const ctx = await assemble(repo.ws);
    expect(instructionSources(ctx)).toEqual([]);
    expect(ctx.warnings).toEqual([
      'AGENTS.md not read: it is a binary file (a NUL byte at offset 1)',
      `${path.join(repo.repo, 'AGENTS.md')} not read: 'AGENTS.md' is not a regular file.`,
    ]);
  });
});
