import { MAX_AGENT_TOOLS, parseAgentFile } from '../../src/agents';

const file = (front: string, body = 'You review code.\n') => `---\n${front}\n---\n${body}`;

describe("Claude Code's agent file format", () => {
  test('name, description, tools as a comma-separated string, model and the body as the prompt', () => {
    const parsed = parseAgentFile(
      file(
        'name: code-reviewer\ndescription: >\n  Reviews code.\n  Use after edits.\ntools: read_file, grep , glob\nmodel: claude-haiku-4-5',
        '\nBe strict.\n\n',
      ),
      'workspace',
      '.claude/agents/code-reviewer.md',
    );
    expect(parsed).toEqual({
      ok: true,
      agent: {
        name: 'code-reviewer',
        description: 'Reviews code. Use after edits.',
        prompt: 'Be strict.',
        tools: ['read_file', 'grep', 'glob'],
        model: 'claude-haiku-4-5',
        source: 'workspace',
        path: '.claude/agents/code-reviewer.md',
      },
    });
  });

  test('tools as a YAML list; model inherit and no tools mean the parent’s', () => {
    const listed = parseAgentFile(file('name: a\ndescription: d\ntools:\n  - bash\n  - mcp__gh__search'), 'operator');
    expect(listed.ok && listed.agent.tools).toEqual(['bash', 'mcp__gh__search']);
    const inherit = parseAgentFile(file('name: a\ndescription: d\nmodel: inherit'), 'operator');
    expect(inherit.ok && 'model' in inherit.agent).toBe(false);
    expect(inherit.ok && 'tools' in inherit.agent).toBe(false);
  });

  test('unknown frontmatter fields (color, permissionMode) are ignored; CRLF and a BOM are read', () => {
    const parsed = parseAgentFile(
      '\uFEFF---\r\nname: a1\r\ndescription: "x: y"\r\ncolor: red\r\n---\r\nPrompt\r\n',
      'operator',
    );
    expect(parsed).toMatchObject({ ok: true, agent: { name: 'a1', description: 'x: y', prompt: 'Prompt' } });
  });

  test.each([
    ['no frontmatter', '# Reviewer\n', 'it does not start with YAML frontmatter (---)'],
    ['unterminated', '---\nname: a\ndescription: b\n', 'its frontmatter does not end with ---'],
    ['invalid YAML', file('name: [a\ndescription: b'), /^its frontmatter is not valid YAML \(/],
    [
      'duplicate keys',
      file('name: a\nname: b\ndescription: c'),
      /^its frontmatter is not valid YAML \(Map keys must be unique/,
    ],
    ['a list', file('- name\n- description'), 'its frontmatter is not a mapping of fields'],
    ['no name', file('description: b'), 'its frontmatter has no name'],
    ['uppercase name', file('name: Reviewer\ndescription: b'), /^its name "Reviewer" is not 1-64 lowercase/],
    ['a path as name', file('name: ../../etc\ndescription: b'), /^its name "\.\.\/\.\.\/etc" is not/],
    ['name too long', file(`name: ${'a'.repeat(65)}\ndescription: b`), /is not 1-64 lowercase/],
    ['no description', file('name: a'), 'its frontmatter has no description'],
    [
      'long description',
      file(`name: a\ndescription: ${'d'.repeat(1025)}`),
      'its description is longer than 1024 characters',
    ],
    [
      'tools a number',
      file('name: a\ndescription: b\ntools: 3'),
      'its tools are not a comma-separated string or a list of names',
    ],
    ['tools a list of maps', file('name: a\ndescription: b\ntools: [{x: 1}]'), /its tools are not/],
    [
      'a tool with a space',
      file('name: a\ndescription: b\ntools: "rm -rf, bash"'),
      /^its tool "rm -rf" is not a tool name/,
    ],
    [
      'too many tools',
      file(
        `name: a\ndescription: b\ntools: ${Array.from({ length: MAX_AGENT_TOOLS + 1 }, (_, i) => `t${i}`).join(',')}`,
      ),
      `it lists more than ${MAX_AGENT_TOOLS} tools`,
    ],
    ['model a map', file('name: a\ndescription: b\nmodel: {x: 1}'), /^its model is not 'inherit' or a model id/],
    ['model with a newline', file('name: a\ndescription: b\nmodel: "a\\nb"'), /^its model is not/],
    ['empty body', file('name: a\ndescription: b', '\n   \n'), 'its body (the system prompt) is empty'],
  ])('%s: skipped with the rule it breaks', (_what, text, problem) => {
    const parsed = parseAgentFile(text, 'workspace');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(parsed.problem).toEqual(typeof problem === 'string' ? problem : expect.stringMatching(problem));
  });

  test('an alias bomb in the frontmatter is refused, not expanded', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 9; i++) {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      bomb.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const parsed = parseAgentFile(file(`name: a\ndescription: b\n${bomb.join('\n')}`), 'workspace');
    expect(parsed).toEqual({ ok: false, problem: expect.stringMatching(/^its frontmatter cannot be read/) });
  });
});
