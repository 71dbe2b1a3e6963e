/**
 * A run's `tools` may name MCP tools (issue 44: a run may name any tool the worker has): naming
 * `mcp__<server>__<tool>` or `mcp__<server>` offers those MCP tools and no others; naming none offers all.
 */
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { ScriptedModel, text } from '../../src/models/scripted';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { stdioTestServer } from './support/servers';

jest.setTimeout(120_000);
const { suite, start } = useWorkflowSuite('mcp-run-tools');

let runtime: McpRuntime;
beforeEach(() => {
  runtime = createMcpRuntime({ connectTimeoutMs: 20_000 });
});
afterEach(() => runtime.close());

async function offered(tools: string[] | undefined): Promise<string[]> {
  const model = new ScriptedModel([text('done')]);
  await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const handle = await start(tq, { mcpServers: { test: stdioTestServer({}) }, ...(tools ? { tools } : {}) });
    expect((await runResult(handle)).exitReason).toBe('completed');
  });
  return model.requests[0]!.tools.map((t) => t.name).sort();
}

test("tools naming one MCP tool offers that tool (and the named built-ins) and none of the server's others", async () => {
  expect(await offered(['read_file', 'mcp__test__lookup'])).toEqual(['mcp__test__lookup', 'read_file']);
});

test("tools naming a server (mcp__<server>) offers all of that server's tools; naming none offers every MCP tool", async () => {
  const all = (await offered(undefined)).filter((n) => n.startsWith('mcp__'));
  expect(all.length).toBeGreaterThan(1);
  expect(await offered(['mcp__test'])).toEqual(all);
});
