/**
 * Finding (issue 44, medium): "workspace MCP servers starve other runs: twelve servers in one
 * .mcp.json hold the worker's whole tmpfs budget for five minutes; other runs' bash calls fail
 * 'timed out before it started'". A workspace's stdio servers now share one call's share of the
 * worker's budget (each a slice of it): twelve servers start, and another run's bash call still
 * gets its share at once. Real bubblewrap, real (dependency-free) MCP servers.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { sandboxStatus, TmpfsBudget } from '../../src/sandbox';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { tempWorkspace } from '../support/temporal';
import { makeContext } from '../tools/helpers';
import { TEST_SERVER_SOURCE } from './mcp-test-server';

jest.setTimeout(120_000);

const MIB = 1024 * 1024;
const SERVERS = 12;

const maybe = sandboxStatus().mode === 'bwrap' ? describe : describe.skip;

maybe('a workspace’s MCP servers and the worker’s tmpfs budget', () => {
  let runtime: McpRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
  });

  test('twelve servers of one workspace hold one call’s share, and another run’s bash call still starts', async () => {
    const budget = new TmpfsBudget(256 * MIB);
    const workspace = await tempWorkspace('mcp-budget');
    await fs.writeFile(path.join(workspace, 'server.js'), TEST_SERVER_SOURCE);
    const mcpServers = Object.fromEntries(
      Array.from({ length: SERVERS }, (_, i) => [
        `s${i}`,
        { command: 'node', args: [path.join(workspace, 'server.js')] },
      ]),
    );
    await fs.writeFile(path.join(workspace, '.mcp.json'), JSON.stringify({ mcpServers }));
    runtime = createMcpRuntime({ workspaceConfig: true, tmpfsBudget: budget, connectTimeoutMs: 5_000 });
    const { servers } = await runtime.listForRun({ workspace, network: false });
    expect(servers.filter((s) => s.error === undefined).map((s) => s.name)).toHaveLength(SERVERS);
    // At most what one call may take: half of what was free.
    expect(budget.inUse).toBeGreaterThan(0);
    expect(budget.inUse).toBeLessThanOrEqual(budget.totalBytes / 2);

    const other = await tempWorkspace('mcp-budget-other');
    const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap', tmpfsBudget: budget })]);
    const result = await registry.run('bash', { command: 'echo started', timeout: 3_000 }, makeContext(other));
    expect(result).toMatchObject({ isError: false });
    expect(result.content).toMatch(/^started/);

    await runtime.close();
    expect(budget.inUse).toBe(0);
  });
});
