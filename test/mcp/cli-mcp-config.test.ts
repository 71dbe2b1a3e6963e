/**
 * `durable-agent run --mcp-config FILE` through the built CLI: the file (Claude Code's
 * `{"mcpServers": …}`) becomes the run's `mcpServers`, unexpanded, and the model can call its
 * tools; a missing or invalid file exits 2 with a message naming what is accepted, before a run starts.
 * The file is the operator's: one in the run's workspace or a workspace root (which a run's model
 * can write) is refused with exit 2, since its servers would run unsandboxed.
 */
import { randomUUID } from 'node:crypto';
import * as fsSync from 'node:fs';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createMcpRuntime } from '../../src/mcp';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared';
import { connectTestEnv, tempWorkspace, uniqueQueue, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent } from '../cli/cli-helpers';
import { stdioTestServer } from './support/servers';

jest.setTimeout(90_000);
let env: TestEnv;
let workspace: string;
/** Where the operator keeps the files: outside the workspace and the roots. */
let configs: string;
const tag = randomUUID().slice(0, 8);
beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('mcp-cli');
  configs = await tempWorkspace('mcp-cli-configs');
});
afterAll(() => env?.close());

/** The CLI's workspace roots: the test's workspace alone (the suite's are the whole temporary directory). */
const roots = () => ({ DURABLE_AGENT_WORKSPACE_ROOTS: workspace });
const runArgs = (id: string) => [
  '--model',
  'scripted-mcp',
  '--workspace',
  workspace,
  '--id',
  id,
  '--no-inline-worker',
  '--json',
];

test("--mcp-config FILE: the run gets the file's servers (unexpanded) and the model calls their tools", async () => {
  const file = path.join(configs, 'mcp.json');
  const server = stdioTestServer({ MCP_TEST_LABEL: '${DA_TEST_LABEL:-from-default}' });
  await fs.writeFile(file, JSON.stringify({ mcpServers: { test: server } }));
  const model = new ScriptedModel([
    toolUse([{ name: 'mcp__test__lookup', input: { key: 'cli' } }]),
    text('Looked it up.'),
  ]);
  const runtime = createMcpRuntime();
  const id = `mcp-cli-${tag}`;
  try {
    await withWorker(env, { model, deps: { mcp: runtime } }, async (taskQueue) => {
      const out = await durableAgent(['run', 'look it up', '--mcp-config', file, ...runArgs(id)], {
        taskQueue,
        env: roots(),
      });
      expect(out.code).toBe(0);
      expect(JSON.parse(out.stdout)).toMatchObject({ exitReason: 'completed', finalText: 'Looked it up.' });
    });
  } finally {
    await runtime.close();
  }
  const last = model.requests[1]!.messages.at(-1)!;
  expect(JSON.stringify(last.content)).toContain('value-of-cli');
  const history = await env.client.workflow.getHandle(id).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = JSON.parse(Buffer.from(payload?.data ?? []).toString('utf8')) as AgentRunInput;
  expect(input.mcpServers).toEqual({ test: server });
});

test('--mcp-config with a missing file or an unsupported transport exits 2 naming the problem', async () => {
  const taskQueue = uniqueQueue('mcp-cli-idle');
  const missing = await durableAgent(
    ['run', 'x', '--mcp-config', path.join(configs, 'nope.json'), ...runArgs(`mcp-cli-${tag}-a`)],
    { taskQueue, env: roots() },
  );
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('nope.json does not exist');
  const grpc = path.join(configs, 'grpc.json');
  await fs.writeFile(grpc, JSON.stringify({ mcpServers: { old: { type: 'grpc', url: 'http://x' } } }));
  const refused = await durableAgent(['run', 'x', '--mcp-config', grpc, ...runArgs(`mcp-cli-${tag}-b`)], {
    taskQueue,
    env: roots(),
  });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(
    `transport 'grpc' is not supported; use stdio ({command, args, env}) or "http" (Streamable HTTP)`,
  );
  const badName = path.join(configs, 'name.json');
  await fs.writeFile(badName, JSON.stringify({ mcpServers: { a__b: { command: 'x' } } }));
  const named = await durableAgent(['run', 'x', '--mcp-config', badName, ...runArgs(`mcp-cli-${tag}-c`)], {
    taskQueue,
    env: roots(),
  });
  expect(named.code).toBe(2);
  expect(named.stderr).toContain('a server name is 1-40 letters, digits, _ or - (no "__"');
});

test("--mcp-config with a Claude Code file's sse server: that server is skipped with a warning, the others sent", async () => {
  const file = path.join(configs, 'with-sse.json');
  const kept = { command: 'node', args: ['server.js'] };
  await fs.writeFile(file, JSON.stringify({ mcpServers: { old: { type: 'sse', url: 'http://x/sse' }, kept } }));
  const id = `mcp-cli-${tag}-sse`;
  const out = await durableAgent(['run', 'x', '--mcp-config', file, ...runArgs(id), '--detach'], {
    taskQueue: uniqueQueue('mcp-cli-sse'),
    env: roots(),
  });
  try {
    expect(out.code).toBe(0);
    expect(out.stderr).toContain("server 'old' is skipped: transport 'sse' is not supported");
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = JSON.parse(Buffer.from(payload?.data ?? []).toString('utf8')) as AgentRunInput;
    expect(input.mcpServers).toEqual({ kept });
  } finally {
    await env.client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  }
});

test("--mcp-config FILE in the run's workspace or a workspace root is refused (exit 2): a run could have written it", async () => {
  const taskQueue = uniqueQueue('mcp-cli-planted');
  const marker = path.join(configs, 'planted-ran');
  const planted = {
    mcpServers: { p: { command: 'sh', args: ['-c', `echo ran > '${marker}'`] } },
  };
  // The project's .mcp.json, which an earlier run's model could have edited.
  await fs.writeFile(path.join(workspace, '.mcp.json'), JSON.stringify(planted));
  const inWorkspace = await durableAgent(
    ['run', 'x', '--mcp-config', path.join(workspace, '.mcp.json'), ...runArgs(`mcp-cli-${tag}-p1`)],
    { taskQueue, env: roots() },
  );
  expect(inWorkspace.code).toBe(2);
  expect(inWorkspace.stderr).toContain(`lies in the run's workspace ${workspace}, which a run's model can write`);
  expect(inWorkspace.stderr).toContain("the workspace's own .mcp.json, which the worker runs sandboxed");
  // Reached through a link from outside.
  const link = path.join(configs, 'link.json');
  await fs.symlink(path.join(workspace, '.mcp.json'), link);
  const linked = await durableAgent(['run', 'x', '--mcp-config', link, ...runArgs(`mcp-cli-${tag}-p2`)], {
    taskQueue,
    env: roots(),
  });
  expect(linked.code).toBe(2);
  expect(linked.stderr).toContain(`(it resolves to ${path.join(workspace, '.mcp.json')})`);
  // In a workspace root (DURABLE_AGENT_WORKSPACE_ROOTS), the run's workspace elsewhere.
  const root = await tempWorkspace('mcp-cli-root');
  await fs.writeFile(path.join(root, 'mcp.json'), JSON.stringify(planted));
  const other = await tempWorkspace('mcp-cli-elsewhere');
  const inRoot = await durableAgent(
    [
      'run',
      'x',
      '--mcp-config',
      path.join(root, 'mcp.json'),
      '--workspace',
      other,
      '--id',
      `mcp-cli-${tag}-p3`,
      '--no-inline-worker',
    ],
    { taskQueue, env: { DURABLE_AGENT_WORKSPACE_ROOTS: `${root}${path.delimiter}${other}` } },
  );
  expect(inRoot.code).toBe(2);
  expect(inRoot.stderr).toContain(`lies in the workspace root ${root}`);
  expect(fsSync.existsSync(marker)).toBe(false);
});
