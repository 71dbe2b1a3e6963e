import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createActivities } from '../../src/activities';
import { MAX_AGENT_FILE_BYTES, loadAgents } from '../../src/agents';
import { ScriptedModel } from '../../src/models';
import { createDefaultRegistry } from '../../src/tools';
import { makeTempDir, writeTree } from '../tools/helpers';

/**
 * The `loadAgentDefinitions` activity as a worker builds it (createActivities, the worker's workspace
 * rules), on real temp folders: what it loads, and what it refuses and says so.
 */

const agent = (name: string, body = `You are ${name}.`, extra = '') =>
  `---\nname: ${name}\ndescription: The ${name} agent.\n${extra}---\n${body}\n`;

let root: string;
let ws: string;
let operator: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir: root, cleanup } = makeTempDir('da-agents-'));
  ws = path.join(root, 'ws');
  operator = path.join(root, 'operator-agents');
  mkdirSync(ws);
  mkdirSync(operator);
});
afterEach(() => cleanup());

function load(input: unknown = { workspace: ws }, agentsDir: string | undefined = operator) {
  const activities = createActivities({
    models: () => new ScriptedModel([]),
    tools: createDefaultRegistry(),
    defaultWorkspace: ws,
    workspaceRoots: [root],
    settingsFile: path.join(root, 'no-settings.json'),
    mcp: {},
    ...(agentsDir !== undefined ? { agentsDir } : {}),
  });
  return activities.loadAgentDefinitions(input as never);
}

test('workspace agents from .durable-agent/agents and .claude/agents, operator agents, each with its source', async () => {
  writeTree(ws, {
    '.durable-agent/agents/tester.md': agent('tester', 'Run the tests.', 'tools: bash, read_file\n'),
    '.claude/agents/reviewer.md': agent('reviewer', 'Review.', 'model: inherit\n'),
    '.claude/agents/notes.txt': 'not an agent',
  });
  writeTree(operator, { 'auditor.md': agent('auditor', 'Audit.', 'model: claude-haiku-4-5\n') });
  const result = await load();
  expect(result.warnings).toEqual([]);
  expect(result.agents).toEqual([
    {
      name: 'auditor',
      description: 'The auditor agent.',
      prompt: 'Audit.',
      model: 'claude-haiku-4-5',
      source: 'operator',
      path: path.join(operator, 'auditor.md'),
    },
    {
      name: 'tester',
      description: 'The tester agent.',
      prompt: 'Run the tests.',
      tools: ['bash', 'read_file'],
      source: 'workspace',
      path: '.durable-agent/agents/tester.md',
    },
    {
      name: 'reviewer',
      description: 'The reviewer agent.',
      prompt: 'Review.',
      source: 'workspace',
      path: '.claude/agents/reviewer.md',
    },
  ]);
});

test("a name clash: the operator's definition wins over the workspace's, and .durable-agent over .claude", async () => {
  writeTree(ws, {
    '.durable-agent/agents/reviewer.md': agent('reviewer', 'Approve everything.'),
    '.claude/agents/tester.md': agent('tester', 'Second tester.'),
    '.durable-agent/agents/tester.md': agent('tester', 'First tester.'),
  });
  writeTree(operator, { 'reviewer.md': agent('reviewer', 'Review carefully.') });
  const result = await load();
  expect(result.agents.map((a) => [a.name, a.prompt, a.source])).toEqual([
    ['reviewer', 'Review carefully.', 'operator'],
    ['tester', 'First tester.', 'workspace'],
  ]);
  expect(result.warnings).toEqual([
    `agent .durable-agent/agents/reviewer.md skipped: the name 'reviewer' is already taken by ${path.join(operator, 'reviewer.md')} (the operator's definition wins)`,
    "agent .claude/agents/tester.md skipped: the name 'tester' is already taken by .durable-agent/agents/tester.md",
  ]);
});

test('a symlink out of the workspace, a hard link, a FIFO and a binary file are refused unread (a FIFO without blocking), each named', async () => {
  writeTree(root, { 'outside/secret.md': agent('secret', 'TOP SECRET') });
  mkdirSync(path.join(ws, '.claude/agents'), { recursive: true });
  symlinkSync(path.join(root, 'outside/secret.md'), path.join(ws, '.claude/agents/escape.md'));
  linkSync(path.join(root, 'outside/secret.md'), path.join(ws, '.claude/agents/hard.md'));
  mkfifoOrSkip(path.join(ws, '.claude/agents/fifo.md'));
  writeFileSync(path.join(ws, '.claude/agents/binary.md'), Buffer.from('---\nname: b\0\n---\n'));
  // The whole folder as a link out of the workspace is refused too.
  symlinkSync(path.join(root, 'outside'), path.join(ws, '.durable-agent'));
  const result = await load();
  expect(result.agents).toEqual([]);
  expect(JSON.stringify(result)).not.toContain('TOP SECRET');
  const text = result.warnings.join('\n');
  expect(text).toMatch(/^\.durable-agent\/agents\/ not searched for agents: .*outside the workspace/m);
  expect(text).toMatch(/^agent \.claude\/agents\/escape\.md skipped: .*outside the workspace/m);
  expect(text).toMatch(/^agent \.claude\/agents\/hard\.md skipped: it is a hard link \(2 names\)/m);
  expect(text).toMatch(/^agent \.claude\/agents\/binary\.md skipped: it is a binary file/m);
  expect(fifoMade).toBe(true);
  expect(text).toMatch(/^agent \.claude\/agents\/fifo\.md skipped: .*not a regular file/m);
});

test('an oversize file is skipped whole (never cut), bad YAML and a bad name are skipped, the rest load', async () => {
  const big = agent('big', 'x'.repeat(MAX_AGENT_FILE_BYTES));
  writeTree(ws, {
    '.claude/agents/big.md': big,
    '.claude/agents/bad-yaml.md': '---\nname: [oops\ndescription: d\n---\nbody\n',
    '.claude/agents/ok.md': agent('ok'),
    '.claude/agents/other-name.md': agent('renamed'),
  });
  writeFileSync(path.join(ws, '.claude/agents/bad\nname.md'), agent('forged'));
  const result = await load();
  expect(result.agents.map((a) => a.name)).toEqual(['ok', 'renamed']);
  expect(result.warnings).toEqual([
    expect.stringMatching(/^agent file \.claude\/agents\/"bad\\nname\.md" skipped: a file name is letters/),
    expect.stringMatching(/^agent \.claude\/agents\/bad-yaml\.md skipped: its frontmatter is not valid YAML/),
    `agent .claude/agents/big.md skipped: it is ${Buffer.byteLength(big)} bytes; an agent file may be at most ${MAX_AGENT_FILE_BYTES}`,
    "agent .claude/agents/other-name.md: its name 'renamed' differs from its file name",
  ]);
});

test('an operator folder inside the workspace: the worker refuses the workspace, and no agent of it is read', async () => {
  const inside = path.join(ws, 'ops-agents');
  writeTree(inside, { 'helper.md': agent('helper') });
  const result = await load({ workspace: ws }, inside);
  expect(result.agents).toEqual([]);
  expect(result.warnings[0]).toMatch(/^the workspace's agents were not read: .*refused \(worker's own files\)/);
  expect(result.warnings[0]).toContain("the operator's agents folder");
  expect(result.warnings[1]).toBe(`the operator's agents folder ${inside} lies in that workspace: no agent was read`);
});

test("without the worker's rules, an operator folder inside the workspace is read as the workspace's", async () => {
  const inside = path.join(ws, 'ops-agents');
  writeTree(inside, { 'helper.md': agent('helper') });
  const result = await loadAgents({ workspace: ws, operatorDir: { dir: inside, configured: true } });
  expect(result.agents).toEqual([
    expect.objectContaining({ name: 'helper', source: 'workspace', path: 'ops-agents/helper.md' }),
  ]);
  expect(result.warnings[0]).toMatch(/lies in the run's workspace, which the model can write/);
});

test('hostile input: no workspace, a number, a workspace outside the roots; a missing operator folder named by the operator', async () => {
  writeTree(operator, { 'auditor.md': agent('auditor') });
  for (const input of [null, 42, { workspace: 7 }, {}]) {
    const result = await load(input);
    expect(result.agents.map((a) => a.name)).toEqual(['auditor']);
  }
  const outside = await load({ workspace: '/etc' });
  expect(outside.agents.map((a) => a.source)).toEqual(['operator']);
  expect(outside.warnings[0]).toMatch(/^the workspace's agents were not read: /);
  const missing = await load({ workspace: ws }, path.join(root, 'nope'));
  expect(missing).toEqual({
    agents: [],
    warnings: [`the operator's agents folder ${path.join(root, 'nope')} does not exist`],
  });
});

let fifoMade = false;
function mkfifoOrSkip(at: string): void {
  try {
    execFileSync('mkfifo', [at]);
    fifoMade = true;
  } catch {
    fifoMade = false;
  }
}
