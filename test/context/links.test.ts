import * as path from 'node:path';
import { assemble, link, makeRepo, skillFile, writeTree } from './helpers';

/**
 * Files the context is built from are read through safe-fs: a link is followed only while it stays
 * inside the workspace (inside the folder searched, for an instruction file above the workspace).
 * `outside/` holds a valid-looking AGENTS.md, MEMORY.md and skill, so a read that escaped would show.
 */
let repo: ReturnType<typeof makeRepo>;
let outside: string;
const SECRET = 'OUTSIDE SECRET';
beforeEach(() => {
  repo = makeRepo();
  outside = path.join(repo.root, 'outside');
  writeTree(outside, {
    'secret.md': `${SECRET}\n`,
    'skills/leak/SKILL.md': skillFile(`name: leak\ndescription: ${SECRET}`),
    'leak/SKILL.md': skillFile(`name: leak\ndescription: ${SECRET}`),
  });
});
afterEach(() => repo.cleanup());

const outsideWarning = (shown: string) =>
  expect.stringMatching(new RegExp(`^${shown.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*is outside the workspace`));

describe('links out of the workspace are refused, never read', () => {
  test('an AGENTS.md that links to /etc/passwd', async () => {
    link('/etc/passwd', path.join(repo.ws, 'AGENTS.md'));
    const ctx = await assemble(repo.ws);
    expect(ctx.system).not.toContain('root:');
    expect(ctx.sources.filter((s) => s.kind === 'instructions')).toEqual([]);
    expect(ctx.warnings).toEqual([
      expect.stringMatching(
        /^AGENTS\.md not read: Path 'AGENTS\.md' is outside the workspace .* \(it resolves to \/etc\/passwd\)/,
      ),
    ]);
  });

  test('a CLAUDE.md and a MEMORY.md that climb out with ..', async () => {
    link('../../outside/secret.md', path.join(repo.ws, 'CLAUDE.md'));
    link('../../outside/secret.md', path.join(repo.ws, 'MEMORY.md'));
    const ctx = await assemble(repo.ws);
    expect(ctx.system).not.toContain(SECRET);
    expect(ctx.system).toContain('MEMORY.md exists in the workspace but was not read');
    expect(ctx.warnings).toEqual([outsideWarning('CLAUDE.md not read: '), outsideWarning('MEMORY.md not read: ')]);
  });

  test('an instruction file above the workspace that links out of its own folder', async () => {
    link(path.join(outside, 'secret.md'), path.join(repo.repo, 'AGENTS.md'));
    const ctx = await assemble(repo.ws);
    expect(ctx.system).not.toContain(SECRET);
    expect(ctx.warnings).toEqual([outsideWarning(`${path.join(repo.repo, 'AGENTS.md')} not read: `)]);
  });

  test('a skills folder, a skill folder or a SKILL.md that links out', async () => {
    link(path.join(outside, 'skills'), path.join(repo.ws, 'skills'));
    link(path.join(outside, 'leak'), path.join(repo.ws, '.durable-agent/skills/leak'));
    link(path.join(outside, 'leak/SKILL.md'), path.join(repo.ws, '.claude/skills/leak/SKILL.md'));
    const ctx = await assemble(repo.ws);
    expect(ctx.system).not.toContain(SECRET);
    expect(ctx.skills).toEqual([]);
    expect(ctx.warnings).toEqual([
      outsideWarning('skills/ not searched for skills: '),
      outsideWarning('skill .durable-agent/skills/leak/SKILL.md skipped: '),
      outsideWarning('skill .claude/skills/leak/SKILL.md skipped: '),
    ]);
  });

  test('links that stay inside are followed', async () => {
    writeTree(repo.ws, {
      'docs/agents.md': 'linked rules\n',
      'shared/tidy/SKILL.md': skillFile('name: tidy\ndescription: Tidy up.'),
    });
    link('docs/agents.md', path.join(repo.ws, 'AGENTS.md'));
    link('../../shared/tidy', path.join(repo.ws, '.claude/skills/tidy'));
    const ctx = await assemble(repo.ws);
    expect(ctx.system).toContain('# Project instructions (AGENTS.md)\n\nlinked rules');
    expect(ctx.skills).toEqual([{ name: 'tidy', description: 'Tidy up.', path: '.claude/skills/tidy/SKILL.md' }]);
    expect(ctx.warnings).toEqual([]);
  });
});
