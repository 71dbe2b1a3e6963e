/**
 * `durable-agent run --mcp-config FILE` through the built CLI: the file (Claude Code's
 * `{"mcpServers": …}`) becomes the run's `mcpServers`, unexpanded, and the model can call its
 * tools; a missing or invalid file exits 2 with a message naming what is accepted, before a run starts.
 */
import { randomUUID } from 'node:crypto';
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
const tag = randomUUID().slice(0, 8);
beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('mcp-cli');
});
afterAll(() => env?.close());

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
  const file = path.join(workspace, 'mcp.json');
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
      const out = await durableAgent(['run', 'look it up', '--mcp-config', file, ...runArgs(id)], { taskQueue });
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
    ['run', 'x', '--mcp-config', path.join(workspace, 'nope.json'), ...runArgs(`mcp-cli-${tag}-a`)],
    { taskQueue },
  );
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('nope.json does not exist');
  const grpc = path.join(workspace, 'grpc.json');
  await fs.writeFile(grpc, JSON.stringify({ mcpServers: { old: { type: 'grpc', url: 'http://x' } } }));
  const refused = await durableAgent(['run', 'x', '--mcp-config', grpc, ...runArgs(`mcp-cli-${tag}-b`)], { taskQueue });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain(
    `transport 'grpc' is not supported; use stdio ({command, args, env}) or "http" (Streamable HTTP)`,
  );
  const badName = path.join(workspace, 'name.json');
  await fs.writeFile(badName, JSON.stringify({ mcpServers: { a__b: { command: 'x' } } }));
  const named = await durableAgent(['run', 'x', '--mcp-config', badName, ...runArgs(`mcp-cli-${tag}-c`)], {
    taskQueue,
  });
  expect(named.code).toBe(2);
  expect(named.stderr).toContain('a server name is 1-40 letters, digits, _ or - (no "__"');
});

test("--mcp-config with a Claude Code file's sse server: that server is skipped with a warning, the others sent", async () => {
  const file = path.join(workspace, 'with-sse.json');
  const kept = { command: 'node', args: ['server.js'] };
  await fs.writeFile(file, JSON.stringify({ mcpServers: { old: { type: 'sse', url: 'http://x/sse' }, kept } }));
  const id = `mcp-cli-${tag}-sse`;
  const out = await durableAgent(['run', 'x', '--mcp-config', file, ...runArgs(id), '--detach'], {
    taskQueue: uniqueQueue('mcp-cli-sse'),
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
