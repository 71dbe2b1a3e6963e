/**
 * Finding (issue 44, low): "a workspace MCP server in the sandbox sees the worker's HOME/PWD/SHELL
 * through /proc/1/environ". The sandbox's pid 1 is bubblewrap's init, which kept the environment
 * bubblewrap was started with (for a server, the MCP client's default environment). The launcher
 * now starts bubblewrap with an empty environment: /proc/1/environ holds nothing, for a server and
 * for a bash call alike. Real bubblewrap.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import type { McpServerListing } from '../../src/shared/mcp';
import { sandboxStatus, TmpfsBudget } from '../../src/sandbox';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { tempWorkspace } from '../support/temporal';
import { makeContext } from '../tools/helpers';
import { TEST_SERVER_SOURCE } from './mcp-test-server';

const maybe = sandboxStatus().mode === 'bwrap' ? describe : describe.skip;

maybe("the sandbox's pid 1 has an empty environment", () => {
  let runtime: McpRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
  });

  test('a workspace MCP server reads nothing of the worker in /proc/1/environ', async () => {
    const workspace = await tempWorkspace('pid1-mcp');
    await fs.writeFile(path.join(workspace, 'server.js'), TEST_SERVER_SOURCE);
    await fs.writeFile(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { probe: { command: 'node', args: [path.join(workspace, 'server.js')] } } }),
    );
    runtime = createMcpRuntime({ workspaceConfig: true, tmpfsBudget: new TmpfsBudget(256 * 1024 * 1024) });
    const { servers } = await runtime.listForRun({ workspace, network: false });
    const server = servers.find((s) => s.name === 'probe') as McpServerListing;
    expect(server.error).toBeUndefined();
    const result = await runtime.call(
      {
        server: 'probe',
        tool: 'environ',
        source: 'workspace',
        ...(server.config ? { config: server.config } : {}),
        sideEffect: 'read_only',
        toolsHash: server.toolsHash,
      },
      {},
      {
        workspace,
        network: false,
        toolUseId: 'toolu_1',
        signal: new AbortController().signal,
        heartbeat: () => {},
        timeoutMs: 30_000,
      },
    );
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.content)).toEqual([]);
  });

  test('a bash call reads nothing in /proc/1/environ either', async () => {
    const workspace = await tempWorkspace('pid1-bash');
    const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap' })]);
    const result = await registry.run(
      'bash',
      { command: 'wc -c < /proc/1/environ; tr "\\0" "\\n" < /proc/1/environ' },
      makeContext(workspace),
    );
    expect(result.content).toBe('0\nExit code: 0');
  });
});
