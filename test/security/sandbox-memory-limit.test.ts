/**
 * Finding (issue 44, high): "a sandboxed workspace MCP server has no memory limit: one grew to 22 GB
 * RSS, thrashed the host, and durable retries re-spawned it twice". A bash call, a workspace hook
 * and a workspace MCP server now run within a memory bound (a memory cgroup where the worker can
 * make one, RLIMIT_DATA per process otherwise); a server the kernel killed at its limit is not
 * started again, and the model is told why. Real bubblewrap, a real (dependency-free) MCP server.
 * Each hog stops by itself at 1.5 GiB, so that on code without the bound the test fails instead
 * of taking the machine down.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import type { McpCallRef, McpServerListing } from '../../src/shared/mcp';
import { hasMemoryCgroup } from '../../src/sandbox/cgroup';
import { bwrapProcessEnv, findBwrap, sandboxStatus, TmpfsBudget } from '../../src/sandbox';
import { sandboxedShellArgs } from '../../src/sandbox/spawn';
import { holdWorkspace } from '../../src/tools/held-workspace';

import { createBashTool, ToolRegistry } from '../../src/tools';
import { group, makeHookBench } from '../hooks/helpers';
import { tempWorkspace } from '../support/temporal';
import { makeContext } from '../tools/helpers';

jest.setTimeout(120_000);

const MIB = 1024 * 1024;
const LIMIT = 192 * MIB;
/** Allocates and touches 16 MiB at a time, up to 1.5 GiB, then says so. */
const HOG = `python3 -c "b=[bytearray(b'x'*(16*2**20)) for _ in range(96)]; print('grew to', 3 * 512, 'MiB')"`;

const maybe = sandboxStatus().mode === 'bwrap' ? describe : describe.skip;

maybe('a sandboxed bash call within its memory limit', () => {
  test('a command that allocates without bound is stopped at the limit, and the result says so', async () => {
    const workspace = await tempWorkspace('memory-bash');
    const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap', limits: { maxMemoryBytes: LIMIT } })]);
    const result = await registry.run('bash', { command: `${HOG}; echo "after: $?"` }, makeContext(workspace));
    expect(result.content).not.toContain('grew to 1536 MiB');
    expect(result.isError).toBe(true);
    if (hasMemoryCgroup()) {
      expect(result.content).toMatch(/after: 137/);
      expect(result.content).toContain("exceeded the sandbox's memory limit of 192 MiB per call and was killed");
    }
    // The next call runs as usual.
    const next = await registry.run('bash', { command: 'echo fine' }, makeContext(workspace));
    expect(next).toMatchObject({ isError: false });
    expect(next.content).toMatch(/^fine/);
  });
});

maybe('a workspace hook within its memory limit', () => {
  test('a hook that allocates without bound is stopped at the limit (and so denies, failing closed)', async () => {
    const bench = makeHookBench();
    try {
      bench.workspaceHooks({ PreToolUse: [group('bash', `${HOG} >&2 || exit 2`)] });
      const outcome = await bench.run(
        { event: 'PreToolUse' as const, toolName: 'bash', toolInput: { command: 'ls' } },
        { sandbox: 'bwrap', limits: { maxMemoryBytes: LIMIT }, tmpfsBudget: new TmpfsBudget(256 * MIB) },
      );
      expect(JSON.stringify(outcome)).not.toContain('grew to 1536 MiB');
      expect(outcome.decision).toBe('deny');
    } finally {
      bench.cleanup();
    }
  });
});

/** A server whose `grow` tool allocates 16 MiB at a time up to 1.5 GiB; it notes each start in starts.log. */
const serverSource = `
const fs = require('node:fs');
const readline = require('node:readline');
fs.appendFileSync('starts.log', 'started\\n');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const held = [];
function grow() {
  for (let i = 0; i < 96; i++) held.push(Buffer.alloc(16 * 1024 * 1024, 1));
  return 'grew to ' + 3 * 512 + ' MiB';
}
const tool = (name) => ({ name, description: name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hog', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [tool('grow'), tool('ping')] } });
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: m.params.name === 'grow' ? grow() : 'pong' }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
});
`;

function ref(listing: McpServerListing, tool: string): McpCallRef {
  return {
    server: listing.name,
    tool,
    source: listing.source,
    ...(listing.config ? { config: listing.config } : {}),
    sideEffect: 'read_only',
    toolsHash: listing.toolsHash,
  };
}

maybe('a workspace MCP server within its memory limit', () => {
  let runtime: McpRuntime | undefined;
  afterEach(async () => {
    await runtime?.close();
  });

  test('is killed at the limit, the model is told, and it is not started again', async () => {
    const workspace = await tempWorkspace('memory-mcp');
    await fs.writeFile(path.join(workspace, 'hog-server.js'), serverSource);
    await fs.writeFile(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { hog: { command: 'node', args: [path.join(workspace, 'hog-server.js')] } } }),
    );
    const budget = new TmpfsBudget(256 * MIB);
    runtime = createMcpRuntime({ workspaceConfig: true, limits: { maxMemoryBytes: LIMIT }, tmpfsBudget: budget });
    const ctx = (id: string) => ({
      workspace,
      network: false,
      toolUseId: id,
      signal: new AbortController().signal,
      heartbeat: () => {},
      timeoutMs: 60_000,
    });
    const { servers } = await runtime.listForRun({ workspace, network: false });
    const server = servers.find((s) => s.name === 'hog') as McpServerListing;
    expect(server).toMatchObject({ source: 'workspace', sandboxed: true });
    expect(server.error).toBeUndefined();

    const grown = await runtime.call(ref(server, 'grow'), {}, ctx('toolu_1'));
    expect(grown.isError).toBe(true);
    expect(grown.content).not.toContain('grew to 1536 MiB');
    if (hasMemoryCgroup()) {
      expect(grown.content).toContain(
        "The server exceeded the sandbox's memory limit of 192 MiB per call and was killed",
      );
    }
    // Later calls (a durable retry, the model trying again, a new listing) do not start it again.
    for (let i = 2; i <= 4; i++) {
      const again = await runtime.call(ref(server, i === 4 ? 'ping' : 'grow'), {}, ctx(`toolu_${i}`));
      expect(again.isError).toBe(true);
      if (hasMemoryCgroup()) expect(again.content).toMatch(/memory limit of 192 MiB.*not started again/s);
    }
    const relisted = await runtime.listForRun({ workspace, network: false });
    expect(relisted.servers.find((s) => s.name === 'hog')?.error).toMatch(/memory limit/);
    const starts = (await fs.readFile(path.join(workspace, 'starts.log'), 'utf8')).trim().split('\n');
    expect(starts.length).toBeLessThanOrEqual(2);
    // Its share of the budget came back with it.
    await runtime.close();
    expect(budget.inUse).toBe(0);
  });
});

maybe('without a memory cgroup: RLIMIT_DATA per process', () => {
  test('the launcher sets it before bubblewrap starts, and an allocation past it fails', async () => {
    const workspace = await tempWorkspace('memory-rlimit');
    const held = await holdWorkspace(workspace);
    try {
      const args = sandboxedShellArgs(`ulimit -d; ${HOG}; echo "after: $?"`, findBwrap() as string, {
        workspace: held.path,
        workspaceSource: held.source,
        network: false,
        limits: { maxProcesses: 64, tmpBytes: 16 * MIB, shmBytes: 4 * MIB, dataBytes: LIMIT },
      });
      const result = spawnSync('/bin/bash', args, { cwd: '/', env: bwrapProcessEnv(), encoding: 'utf8' });
      expect(result.stdout).toMatch(new RegExp(`^${LIMIT / 1024}\\n`));
      expect(result.stdout).not.toContain('grew to 1536 MiB');
      expect(result.stdout).toMatch(/after: 1/);
      expect(result.stderr).toMatch(/MemoryError/);
    } finally {
      await held.close();
    }
  });
});
