/**
 * Issue 44's MCP findings in real runs (the real workflow and worker on the test Temporal server,
 * the scripted model): a workspace server's `readOnlyHint` does not spare its calls the approval
 * `approveMutating` asks for; a server name that would make `mcp__<server>__<tool>` ambiguous is
 * refused; and an interrupt during run start does not wait for a server that never answers.
 */
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { denyToolUpdate, interruptSignal } from '../../src/shared';
import { sandboxStatus } from '../../src/sandbox';
import { runResult, toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { WHERE_SERVER_SOURCE } from './support/probe-server';

jest.setTimeout(120_000);
const { suite, start } = useWorkflowSuite('mcp-trust');

let runtime: McpRuntime;
afterEach(() => runtime?.close());

const maybe = sandboxStatus().mode === 'bwrap' ? test : test.skip;
maybe('a workspace server that marks its tool readOnlyHint still asks for approval under approveMutating', async () => {
  // The server's one tool, `where`, says readOnlyHint: true.
  await fs.writeFile(path.join(suite.workspace, 'where.js'), WHERE_SERVER_SOURCE);
  await fs.writeFile(
    path.join(suite.workspace, '.mcp.json'),
    JSON.stringify({ mcpServers: { ws: { command: 'node', args: [path.join(suite.workspace, 'where.js')] } } }),
  );
  runtime = createMcpRuntime({ connectTimeoutMs: 20_000 });
  const model = new ScriptedModel([toolUse([{ name: 'mcp__ws__where', input: {} }]), text('done')]);
  await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const h = await start(tq, { approveMutating: true });
    const waiting = await waitForState(h, (s) => s.pendingApprovals.length > 0 || s.status !== 'running');
    expect(waiting.pendingApprovals.map((a) => a.name)).toEqual(['mcp__ws__where']);
    await h.executeUpdate(denyToolUpdate, { args: [{ toolUseId: waiting.pendingApprovals[0]!.toolUseId }] });
    expect((await runResult(h)).exitReason).toBe('completed');
  });
  const [denied] = toolResults(model.requests[1]!.messages[model.requests[1]!.messages.length - 1]);
  expect(denied).toMatchObject({ is_error: true });
  expect(String(denied!.content)).toContain('denied');
});

test("a server name ending in '_' (mcp__gh___x would name server gh or gh_) is refused when the run starts", async () => {
  runtime = createMcpRuntime({ connectTimeoutMs: 5_000 });
  const model = new ScriptedModel([text('never')]);
  await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const h = await start(tq, {
      mcpServers: { gh_: { command: 'node', args: ['-e', ''] } },
      permissions: { mcp__gh_: 'deny' },
    });
    const failure = await h.result().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause?.message).toMatch(/not ending in "_"/);
  });
  expect(model.requests).toHaveLength(0);
});

test('an interrupt while run start lists a server that never answers ends the run within seconds', async () => {
  const started = path.join(suite.workspace, '..', `${path.basename(suite.workspace)}-silent-started`);
  // Reads its stdin and never answers `initialize`.
  const silent = {
    command: process.execPath,
    args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(started)}, ''); process.stdin.resume();`],
  };
  runtime = createMcpRuntime({ connectTimeoutMs: 45_000 });
  const model = new ScriptedModel([text('never')]);
  try {
    await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
      const h = await start(tq, { mcpServers: { silent } });
      const deadline = Date.now() + 20_000;
      while (!existsSync(started) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(started)).toBe(true);
      const interruptedAt = Date.now();
      await h.signal(interruptSignal, { reason: 'stop' });
      const result = await runResult(h);
      expect(result.exitReason).toBe('interrupted');
      expect(Date.now() - interruptedAt).toBeLessThan(8_000);
    });
  } finally {
    await fs.rm(started, { force: true });
  }
  expect(model.requests).toHaveLength(0);
});

test('a cancel while run start lists a server that never answers ends the run within seconds', async () => {
  const started = path.join(suite.workspace, '..', `${path.basename(suite.workspace)}-silent-cancel`);
  const silent = {
    command: process.execPath,
    args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(started)}, ''); process.stdin.resume();`],
  };
  runtime = createMcpRuntime({ connectTimeoutMs: 45_000 });
  const model = new ScriptedModel([text('never')]);
  try {
    await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
      const h = await start(tq, { mcpServers: { silent } });
      const deadline = Date.now() + 20_000;
      while (!existsSync(started) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(started)).toBe(true);
      const cancelledAt = Date.now();
      await h.cancel();
      await h.result().catch(() => undefined);
      expect((await h.describe()).status.name).toBe('CANCELLED');
      expect(Date.now() - cancelledAt).toBeLessThan(8_000);
    });
  } finally {
    await fs.rm(started, { force: true });
  }
  expect(model.requests).toHaveLength(0);
});
