/**
 * MCP tools in real runs: the real workflow and worker on the test Temporal server, the scripted
 * model, and real MCP servers (the SDK test server over stdio and Streamable HTTP). Each test
 * checks what the model was offered and saw, what the run reported, and what history recorded.
 */
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionHooks } from '../../src/hooks';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { approveToolUpdate, eventsQuery, interruptSignal, type ModelRequest, type RunEvent } from '../../src/shared';
import { runResult, toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { startHttpTestServer, stdioTestServer } from './support/servers';

jest.setTimeout(120_000);
const { suite, start } = useWorkflowSuite('mcp-run');

let runtime: McpRuntime;
let logFile: string;
beforeEach(() => {
  runtime = createMcpRuntime({ connectTimeoutMs: 20_000 });
  logFile = path.join(suite.workspace, 'server.log');
});
afterEach(() => runtime.close());

const lines = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n') : []);
const toolNames = (r: ModelRequest) => r.tools.map((t) => t.name);
const lastResults = (r: ModelRequest) => toolResults(r.messages[r.messages.length - 1]);
async function eventsOf(workflowId: string): Promise<RunEvent[]> {
  return (await suite.env.client.workflow.getHandle(workflowId).query(eventsQuery, {})).events;
}
const notices = (events: RunEvent[]) => events.flatMap((e) => (e.kind === 'notice' ? [e.message] : []));
async function scheduledInputs(workflowId: string, type: string): Promise<string[]> {
  const history = await suite.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .filter((e) =>
      [type, `durableAgent.${type}`].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
    )
    .map((e) => Buffer.from(e.activityTaskScheduledEventAttributes!.input!.payloads![0]!.data!).toString('utf8'));
}
const servers = () => ({ test: stdioTestServer({ MCP_TEST_LOG: logFile }) });

test("a run offers its servers' tools as mcp__<server>__<tool>, runs them as activities and reports the servers", async () => {
  const model = new ScriptedModel([
    toolUse([
      { name: 'mcp__test__lookup', input: { key: 'alpha' } },
      { name: 'mcp__test__append_note', input: { note: 'hi' } },
    ]),
    toolUse([{ name: 'mcp__test__lookup', input: { key: 'beta' } }]),
    text('done'),
  ]);
  const { handle, events } = await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const h = await start(tq, { mcpServers: servers() });
    expect((await runResult(h)).exitReason).toBe('completed');
    return { handle: h, events: await eventsOf(h.workflowId) };
  });
  const lookup = model.requests[0]!.tools.find((t) => t.name === 'mcp__test__lookup');
  expect(lookup).toMatchObject({ description: 'Look a key up (read-only).', input_schema: { type: 'object' } });
  expect(toolNames(model.requests[0]!)).toEqual(expect.arrayContaining(['bash', 'mcp__test__append_note']));
  expect(lastResults(model.requests[1]!).map((r) => [r.content, r.is_error ?? false])).toEqual([
    ['value-of-alpha', false],
    ['appended hi', false],
  ]);
  // Later calls still offer the tools, though only the first carried their definitions.
  expect(toolNames(model.requests[2]!)).toContain('mcp__test__lookup');
  const calls = await scheduledInputs(handle.workflowId, 'callModel');
  expect(calls[0]).toContain('"mcpTools"');
  expect(calls.slice(1).every((c) => !c.includes('"mcpTools"') && c.includes('"mcpToolsHash"'))).toBe(true);
  expect((await scheduledInputs(handle.workflowId, 'runTool')).length).toBe(3);
  expect(lines().map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([
    'lookup alpha',
    'append_note hi',
    'lookup beta',
  ]);
  expect(notices(events)).toContainEqual(expect.stringMatching(/^mcp: test \(run, stdio\): \d+ tools$/));
});

test('a changed tool list is taken between turns and reported; a call to a tool that went away is an is_error result', async () => {
  const model = new ScriptedModel([
    toolUse([
      { name: 'mcp__test__add_tool', input: {} },
      { name: 'mcp__test__remove_tool', input: {} },
    ]),
    toolUse([
      { name: 'mcp__test__removable', input: {} },
      { name: 'mcp__test__extra_1', input: {} },
    ]),
    text('done'),
  ]);
  const { events } = await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const h = await start(tq, { mcpServers: servers() });
    expect((await runResult(h)).exitReason).toBe('completed');
    return { handle: h, events: await eventsOf(h.workflowId) };
  });
  expect(toolNames(model.requests[0]!)).toContain('mcp__test__removable');
  expect(toolNames(model.requests[1]!)).toContain('mcp__test__extra_1');
  expect(toolNames(model.requests[1]!)).not.toContain('mcp__test__removable');
  const [gone, added] = lastResults(model.requests[2]!);
  expect(gone).toMatchObject({ is_error: true });
  expect(gone!.content).toContain("MCP server 'test' does not offer it");
  expect(added).toMatchObject({ content: 'extra_1 ran' });
  expect(notices(events)).toContainEqual(
    'mcp: test: tools changed: added mcp__test__extra_1; removed mcp__test__removable',
  );
});

test('permissions, approvals and PreToolUse hooks (matcher mcp__test__.*) apply to MCP tools as to every tool', async () => {
  const seen: string[] = [];
  const hooks: FunctionHooks = {
    PreToolUse: [
      {
        matcher: 'mcp__test__set.*',
        run: (e) => (seen.push(e.tool_name ?? ''), { decision: 'block', reason: 'no setting' }),
      },
    ],
  };
  const model = new ScriptedModel([
    toolUse([
      { name: 'mcp__test__lookup', input: { key: 'ok' } },
      { name: 'mcp__test__set_value', input: { key: 'k', value: 'v' } },
      { name: 'mcp__test__append_note', input: { note: 'approved' } },
    ]),
    toolUse([{ name: 'mcp__other__x', input: {} }]),
    text('done'),
  ]);
  await withWorker(suite.env, { model, deps: { mcp: runtime, hooks } }, async (tq) => {
    const h = await start(tq, {
      mcpServers: servers(),
      approveMutating: true,
      permissions: { mcp__test__picture: 'deny' },
    });
    const waiting = await waitForState(h, (s) => s.pendingApprovals.length > 0);
    // Read-only lookup ran without asking; only the mutating call waits.
    expect(waiting.pendingApprovals.map((a) => a.name)).toEqual(['mcp__test__append_note']);
    await h.executeUpdate(approveToolUpdate, { args: [{ toolUseId: waiting.pendingApprovals[0]!.toolUseId }] });
    expect((await runResult(h)).exitReason).toBe('completed');
  });
  const [lookup, set, note] = lastResults(model.requests[1]!);
  expect(lookup!.content).toBe('value-of-ok');
  expect(set).toMatchObject({ is_error: true });
  expect(set!.content).toContain('no setting');
  expect(note!.content).toBe('appended approved');
  expect(seen).toEqual(['mcp__test__set_value']);
  expect(lastResults(model.requests[2]!)[0]!.content).toContain('this run has no MCP server by that name');
  expect(lines().some((l) => l.startsWith('set_value'))).toBe(false);
});

test('an interrupt during a slow MCP call sends notifications/cancelled: the server stops the call; details name the servers', async () => {
  const model = new ScriptedModel([toolUse([{ name: 'mcp__test__slow', input: { ms: 60_000 } }]), text('never')]);
  await withWorker(suite.env, { model, deps: { mcp: runtime, toolHeartbeatIntervalMs: 200 } }, async (tq) => {
    const h = await start(tq, { mcpServers: servers() });
    await waitForState(h, (s) => s.activeTools.includes('mcp__test__slow'));
    await waitUntil(() => lines().some((l) => l.startsWith('slow started')));
    // The run's details name its servers.
    const metadata = await h.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toMatch(/ · mcp: test: \d+ tools$/);
    await h.signal(interruptSignal, { reason: 'stop' });
    expect((await runResult(h)).exitReason).toBe('interrupted');
  });
  await waitUntil(() => lines().some((l) => l.startsWith('slow cancelled')));
});

test("servers from the worker's file and the workspace's .mcp.json join the run's, each reported with its source", async () => {
  const http = await startHttpTestServer('tok');
  // The operator's file lies outside every workspace (a worker refuses one inside).
  const operatorDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-run-operator-'));
  const file = path.join(operatorDir, 'worker-mcp.json');
  await fs.writeFile(
    file,
    JSON.stringify({
      mcpServers: {
        remote: { type: 'http', url: http.url, headers: { Authorization: 'Bearer ${DA_TEST_MCP_TOKEN}' } },
      },
    }),
  );
  await fs.writeFile(
    path.join(suite.workspace, '.mcp.json'),
    JSON.stringify({
      mcpServers: { test: { command: 'node', args: ['x.js'] }, broken: { command: 'definitely-not-a-command' } },
    }),
  );
  const worker = createMcpRuntime({ configFile: file, env: { DA_TEST_MCP_TOKEN: 'tok' } });
  const model = new ScriptedModel([toolUse([{ name: 'mcp__remote__lookup', input: { key: 'w' } }]), text('done')]);
  try {
    const { handle, events } = await withWorker(suite.env, { model, deps: { mcp: worker } }, async (tq) => {
      const h = await start(tq, { mcpServers: servers() });
      expect((await runResult(h)).exitReason).toBe('completed');
      return { handle: h, events: await eventsOf(h.workflowId) };
    });
    expect(lastResults(model.requests[1]!)[0]!.content).toBe('value-of-w');
    const said = notices(events);
    expect(said).toContainEqual(expect.stringMatching(/^mcp: test \(run, stdio\)/));
    expect(said).toContainEqual(expect.stringMatching(/^mcp: remote \(worker, http\): \d+ tools$/));
    expect(said).toContainEqual("mcp: workspace server 'test' is ignored: the run's has that name");
    expect(said).toContainEqual(
      expect.stringMatching(/^mcp: broken \(workspace, stdio(, sandboxed)?\): unavailable: /),
    );
    // The worker's server is not recorded with its configuration (its headers stay on the worker).
    const [call] = await scheduledInputs(handle.workflowId, 'runTool');
    expect(call).toContain('"source":"worker"');
    expect(call).not.toContain('headers');
  } finally {
    await worker.close();
    await http.close();
    await fs.rm(operatorDir, { recursive: true, force: true });
  }
});

test("after continue-as-new the new execution lists the run's servers again and goes on calling their tools", async () => {
  const calls = 12;
  const model = new ScriptedModel([
    ...Array.from({ length: calls }, (_, i) => toolUse([{ name: 'mcp__test__lookup', input: { key: `k${i}` } }])),
    text('done'),
  ]);
  const { events, workflowId } = await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const h = await start(tq, { mcpServers: servers(), continueAsNewAfter: { events: 50 } });
    expect((await runResult(h)).exitReason).toBe('completed');
    return { events: await eventsOf(h.workflowId), workflowId: h.workflowId };
  });
  expect(notices(events)).toContainEqual(expect.stringMatching(/^continued as new/));
  // Every call reached the server and every model call was offered the tools.
  expect(lines().filter((l) => l.startsWith('lookup'))).toHaveLength(calls);
  expect(model.requests.every((r) => toolNames(r).includes('mcp__test__lookup'))).toBe(true);
  expect(lastResults(model.requests[calls]!)[0]!.content).toBe(`value-of-k${calls - 1}`);
  // The latest execution listed the carried server in an activity of its own.
  expect(await scheduledInputs(workflowId, 'listMcpTools')).toEqual([expect.stringContaining('"name":"test"')]);
});

async function waitUntil(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
