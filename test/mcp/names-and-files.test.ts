/**
 * What the model sees and what the operator writes agree: a permission key `mcp__<server>` is the
 * server of every name `mcp__<server>__<tool>` the run offers, whatever the tool's name (no server
 * name accepted makes it ambiguous); a Claude Code file with an `sse` server is used without that
 * entry (and says so); a workspace server's annotations never make its tools read-only; and a
 * sandboxed workspace server that cannot start says what the sandbox hides.
 */
import fc from 'fast-check';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { parseMcpConfig } from '../../src/mcp/config';
import { toolEntries } from '../../src/mcp/listing';
import { mcpServerKey, mcpServersSchema, mcpToolName } from '../../src/shared/mcp';
import { sandboxStatus } from '../../src/sandbox';
import { tempWorkspace } from '../support/temporal';

const nameChars = fc.constantFrom(...'ab_-9Z'.split(''));

test('every accepted server name gives back its own permission key from any of its tool names', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: nameChars, minLength: 1, maxLength: 8 }),
      fc.string({ unit: nameChars, minLength: 1, maxLength: 8 }),
      (server, tool) => {
        const accepted = mcpServersSchema().safeParse({ [server]: { command: 'x' } }).success;
        if (accepted) expect(mcpServerKey(mcpToolName(server, tool))).toBe(`mcp__${server}`);
      },
    ),
    { numRuns: 2000 },
  );
  // The issue's pair: server `a_` with tool `b__c` and server `a` with tool `_b__c` both named mcp__a___b__c.
  expect(mcpServersSchema().safeParse({ a_: { command: 'x' } }).success).toBe(false);
  expect(mcpServersSchema().safeParse({ gh_: { command: 'x' } }).success).toBe(false);
  expect(mcpServerKey(mcpToolName('a', '_b__c'))).toBe('mcp__a');
});

test("a Claude Code file's sse server is skipped with a warning; its other servers are used", () => {
  const parsed = parseMcpConfig(
    {
      mcpServers: {
        old: { type: 'sse', url: 'https://example.com/sse' },
        files: { command: 'npx', args: ['-y', 'server'] },
      },
    },
    'mcp.json',
  );
  expect(parsed).toEqual({
    ok: true,
    servers: { files: { command: 'npx', args: ['-y', 'server'] } },
    warnings: [expect.stringMatching(/^mcp\.json: server 'old' is skipped: transport 'sse' is not supported/)],
  });
});

test("a workspace server's readOnlyHint and idempotentHint do not make its tools read-only or idempotent", () => {
  const raw = [
    { name: 'r', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
    { name: 'i', inputSchema: { type: 'object' }, annotations: { idempotentHint: true } },
  ];
  expect(toolEntries('op', raw).tools.map((t) => t.sideEffect)).toEqual(['read_only', 'idempotent']);
  expect(toolEntries('ws', raw, false).tools.map((t) => t.sideEffect)).toEqual(['mutating', 'mutating']);
});

describe('runtime', () => {
  let workspace: string;
  const runtimes: McpRuntime[] = [];
  beforeEach(async () => {
    workspace = await tempWorkspace('mcp-names');
  });
  afterEach(async () => {
    await Promise.all(runtimes.splice(0).map((r) => r.close()));
  });
  const runtime = (options: Parameters<typeof createMcpRuntime>[0] = {}) => {
    const r = createMcpRuntime({ connectTimeoutMs: 10_000, workspaceRoots: [workspace], ...options });
    runtimes.push(r);
    return r;
  };

  test("the workspace's .mcp.json and the worker's file: an sse entry is skipped and said, the others listed", async () => {
    const config = {
      mcpServers: {
        legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
        other: { command: path.join(os.tmpdir(), 'no-such-dir-of-durable-agent', 'server') },
      },
    };
    await fs.writeFile(path.join(workspace, '.mcp.json'), JSON.stringify(config));
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-names-worker-'));
    try {
      const file = path.join(outside, 'mcp.json');
      await fs.writeFile(file, JSON.stringify({ mcpServers: { wlegacy: { type: 'sse', url: 'http://x/sse' } } }));
      const { servers, notes } = await runtime({ configFile: file }).listForRun({ workspace, network: false });
      expect(servers.map((s) => s.name)).toEqual(['other']);
      expect(notes).toEqual([
        expect.stringMatching(/mcp\.json: server 'wlegacy' is skipped: transport 'sse' is not supported/),
        expect.stringMatching(
          /^the workspace's \.mcp\.json: server 'legacy' is skipped: transport 'sse' is not supported/,
        ),
      ]);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  const maybe = sandboxStatus().mode === 'bwrap' ? test : test.skip;
  maybe('a sandboxed workspace server that cannot start says that the sandbox hides paths outside it', async () => {
    const elsewhere = path.join(os.homedir(), 'some-tool', 'server.js');
    await fs.writeFile(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { tool: { command: 'node', args: [elsewhere] } } }),
    );
    const { servers } = await runtime().listForRun({ workspace, network: false });
    expect(servers[0]).toMatchObject({ name: 'tool', sandboxed: true });
    expect(servers[0]!.error).toMatch(
      /runs in the bash sandbox, which shows it only the system directories and the workspace/,
    );
  });
});
