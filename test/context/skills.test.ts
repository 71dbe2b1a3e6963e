import fc from 'fast-check';
import { MAX_SKILLS, parseSkillFrontmatter } from '../../src/context';
import { assemble, makeTempDir, skillFile, writeTree } from './helpers';

let ws: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir: ws, cleanup } = makeTempDir('da-context-skills-'));
});
afterEach(() => cleanup());

describe('SKILL.md frontmatter', () => {
  test('name and description are read; folded YAML becomes one line', () => {
    expect(
      parseSkillFrontmatter(
        skillFile('name: pdf-forms\ndescription: >\n  Fill PDF forms.\n  Use for PDFs.\nlicense: MIT'),
      ),
    ).toEqual({
      ok: true,
      name: 'pdf-forms',
      description: 'Fill PDF forms. Use for PDFs.',
    });
    expect(parseSkillFrontmatter('\uFEFF---\r\nname: a1\r\ndescription: "x: y"\r\n---\r\n')).toEqual({
      ok: true,
      name: 'a1',
      description: 'x: y',
    });
  });

  test.each([
    ['no frontmatter', '# Just a title\n', 'it does not start with YAML frontmatter (---)'],
    ['unterminated', '---\nname: a\ndescription: b\n', 'its frontmatter does not end with --- within 16384 bytes'],
    ['invalid YAML', skillFile('name: [a\ndescription: b'), /^its frontmatter is not valid YAML \(/],
    [
      'duplicate keys',
      skillFile('name: a\nname: b\ndescription: c'),
      /^its frontmatter is not valid YAML \(Map keys must be unique/,
    ],
    ['a list', skillFile('- name\n- description'), 'its frontmatter is not a mapping of fields'],
    ['no name', skillFile('description: b'), 'its frontmatter has no name'],
    ['a number as name', skillFile('name: 12\ndescription: b'), 'its frontmatter has no name'],
    [
      'uppercase name',
      skillFile('name: PDF\ndescription: b'),
      "its name 'PDF' is not 1-64 lowercase letters, digits and single hyphens",
    ],
    ['double hyphen', skillFile('name: a--b\ndescription: b'), /^its name 'a--b' is not/],
    ['leading hyphen', skillFile('name: -a\ndescription: b'), /^its name '-a' is not/],
    ['name too long', skillFile(`name: ${'a'.repeat(65)}\ndescription: b`), /is not 1-64 lowercase/],
    ['no description', skillFile('name: a'), 'its frontmatter has no description'],
    ['blank description', skillFile("name: a\ndescription: '   '"), 'its frontmatter has no description'],
    [
      'description too long',
      skillFile(`name: a\ndescription: ${'d'.repeat(1025)}`),
      'its description is longer than 1024 characters',
    ],
    [
      'alias bomb',
      skillFile(
        'name: a\ndescription: b\nx: &a [1,1,1,1,1,1,1,1,1,1]\ny: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nz: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      ),
      /^its frontmatter cannot be read \(.*alias/i,
    ],
  ])('%s is refused, naming the rule', (_label, text, problem) => {
    const parsed = parseSkillFrontmatter(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.problem).toEqual(typeof problem === 'string' ? problem : expect.stringMatching(problem));
  });

  test('never throws, whatever the file holds', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.string({ maxLength: 300 }), (front, body) => {
        const parsed = parseSkillFrontmatter(`---\n${front}\n---\n${body}`);
        if (parsed.ok) {
          expect(parsed.name.length).toBeLessThanOrEqual(64);
          expect(parsed.description).not.toMatch(/\n/);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('skills in the workspace', () => {
  test('are found in skills/, .durable-agent/skills/ and .claude/skills/, listed with the path of their SKILL.md', async () => {
    writeTree(ws, {
      'skills/b-skill/SKILL.md': skillFile('name: b-skill\ndescription: Second in its folder.'),
      'skills/a-skill/SKILL.md': skillFile('name: a-skill\ndescription: First in its folder.'),
      '.durable-agent/skills/deploy/SKILL.md': skillFile('name: deploy\ndescription: Deploy the app.'),
      '.claude/skills/review/SKILL.md': skillFile('name: review\ndescription: Review a change.'),
      'skills/notes.md': 'not a skill folder',
      'skills/empty/readme.txt': 'a folder without SKILL.md',
    });
    const ctx = await assemble(ws);
    expect(ctx.skills).toEqual([
      { name: 'a-skill', description: 'First in its folder.', path: 'skills/a-skill/SKILL.md' },
      { name: 'b-skill', description: 'Second in its folder.', path: 'skills/b-skill/SKILL.md' },
      { name: 'deploy', description: 'Deploy the app.', path: '.durable-agent/skills/deploy/SKILL.md' },
      { name: 'review', description: 'Review a change.', path: '.claude/skills/review/SKILL.md' },
    ]);
    for (const skill of ctx.skills)
      expect(ctx.system).toContain(`- ${skill.name}: ${skill.description} (${skill.path})`);
    expect(ctx.system).toContain('read its SKILL.md with read_file');
    // The body is not in the prompt: the model reads it when it needs it.
    expect(ctx.system).not.toContain('1. Do it.');
    expect(ctx.warnings).toEqual([]);
  });

  test('a bad SKILL.md is skipped with a warning; the good ones are still listed', async () => {
    writeTree(ws, {
      'skills/good/SKILL.md': skillFile('name: good\ndescription: Works.'),
      'skills/broken/SKILL.md': skillFile('name: [broken\ndescription: x'),
      'skills/nameless/SKILL.md': skillFile('description: x'),
      '.claude/skills/good/SKILL.md': skillFile('name: good\ndescription: A second skill named good.'),
      '.claude/skills/folder/SKILL.md': skillFile('name: other-name\ndescription: Named unlike its folder.'),
    });
    const ctx = await assemble(ws);
    expect(ctx.skills.map((s) => s.path)).toEqual(['skills/good/SKILL.md', '.claude/skills/folder/SKILL.md']);
    expect(ctx.warnings).toEqual([
      expect.stringMatching(/^skill skills\/broken\/SKILL\.md skipped: its frontmatter is not valid YAML/),
      'skill skills/nameless/SKILL.md skipped: its frontmatter has no name',
      "skill .claude/skills/folder/SKILL.md: its name 'other-name' differs from its folder 'folder'",
      "skill .claude/skills/good/SKILL.md skipped: the name 'good' is already taken by skills/good/SKILL.md",
    ]);
  });

  test(`at most ${MAX_SKILLS} skills are listed; the rest are named in a warning`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_SKILLS + 5; i++) {
      const name = `s${String(i).padStart(3, '0')}`;
      files[`skills/${name}/SKILL.md`] = skillFile(`name: ${name}\ndescription: Skill number ${i}.`);
    }
    writeTree(ws, files);
    const ctx = await assemble(ws);
    expect(ctx.skills).toHaveLength(MAX_SKILLS);
    expect(ctx.skills.at(-1)?.name).toBe(`s0${MAX_SKILLS - 1}`);
    expect(ctx.warnings).toEqual([
      `more than ${MAX_SKILLS} skills: skills/s0${MAX_SKILLS}/SKILL.md and any after it are not listed`,
    ]);
  });

  test('the skills section is capped in bytes; the skills that did not fit are counted', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) {
      files[`skills/k${i}/SKILL.md`] = skillFile(`name: k${i}\ndescription: ${'long description '.repeat(60).trim()}`);
    }
    writeTree(ws, files);
    const ctx = await assemble(ws);
    const section = ctx.sources.find((s) => s.kind === 'skills');
    expect(section!.bytes).toBeLessThanOrEqual(12 * 1024 + 16);
    expect(ctx.skills.length).toBeGreaterThan(5);
    expect(ctx.skills.length).toBeLessThan(20);
    expect(ctx.warnings).toEqual([
      `${20 - ctx.skills.length} skills not listed: the skills section is capped at 12,288 bytes`,
    ]);
  });

  test('skills are not listed when the run does not offer read_file', async () => {
    writeTree(ws, { 'skills/good/SKILL.md': skillFile('name: good\ndescription: Works.') });
    const ctx = await assemble(ws, { toolNames: ['grep'] });
    expect(ctx.skills).toEqual([]);
    expect(ctx.system).not.toContain('# Skills');
    expect(ctx.warnings).toEqual(['1 skills not listed: the run does not offer read_file to read them']);
  });
});
