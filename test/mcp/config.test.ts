/**
 * The `mcpServers` configuration as the run input and the files take it: Claude Code's shape,
 * bounded, with every refusal naming what is accepted; and which server wins when two sources
 * use the same name (the operator's, never the workspace's).
 */
import { chooseServers, parseMcpConfig } from '../../src/mcp/config';
import { toolEntries, withinBudget } from '../../src/mcp/listing';
import { MAX_MCP_SERVERS, MAX_MCP_TOOLS_BYTES } from '../../src/shared/mcp';
import { parseRunInput } from '../../src/shared';

const run = (mcpServers: unknown) => parseRunInput({ prompt: 'x', mcpServers });

test("stdio and Streamable HTTP servers in Claude Code's shape are accepted, with or without the mcpServers wrapper", () => {
  const servers = {
    github: { type: 'http', url: 'https://api.example.com/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } },
    files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'], env: { DEBUG: '1' } },
    typed: { type: 'stdio', command: 'server' },
  };
  expect(run(servers)).toMatchObject({ ok: true });
  expect(parseMcpConfig({ mcpServers: servers }, 'f.json')).toEqual({ ok: true, servers });
  expect(parseMcpConfig(servers, 'f.json')).toEqual({ ok: true, servers });
});

test.each([
  [
    { old: { type: 'sse', url: 'http://x' } },
    'transport \'sse\' is not supported; use stdio ({command, args, env}) or "http"',
  ],
  [{ a: 'npx server' }, 'a server is an object'],
  [{ a: { command: '' } }, 'command must be a non-empty string'],
  [{ a: { type: 'http' } }, 'url'],
  [{ a: { command: 'x', cwd: '/' } }, 'cwd'],
  [{ 'bad name': { command: 'x' } }, 'a server name is 1-40 letters, digits, _ or - (no "__", not ending in "_"'],
  [{ a__b: { command: 'x' } }, 'a server name is 1-40 letters'],
  [{ a: { command: 'x', args: 'not-a-list' } }, 'args'],
  [{ a: { command: 'x', env: { K: 1 } } }, 'env'],
  [
    Object.fromEntries(Array.from({ length: MAX_MCP_SERVERS + 1 }, (_, i) => [`s${i}`, { command: 'x' }])),
    `at most ${MAX_MCP_SERVERS} servers`,
  ],
  [
    { a: { command: 'x', args: Array.from({ length: 10 }, () => 'y'.repeat(4000)) } },
    'mcpServers: the configuration is 40060 bytes; the limit is 32768',
  ],
  [[{ command: 'x' }], 'mcpServers'],
])('a hostile configuration is refused with a message naming what is accepted (%#)', (servers, message) => {
  const parsed = run(servers);
  expect(parsed.ok).toBe(false);
  expect(!parsed.ok && parsed.error).toContain(message);
});

test("on a name used twice the run's server wins over the worker's, and either over the workspace's", () => {
  const notes: string[] = [];
  const chosen = chooseServers(
    [
      { source: 'workspace', servers: { a: { command: 'ws-a' }, c: { command: 'ws-c' } } },
      { source: 'worker', servers: { a: { command: 'worker-a' }, b: { command: 'worker-b' } } },
      { source: 'run', servers: { b: { command: 'run-b' } } },
    ],
    (m) => notes.push(m),
  );
  expect(chosen.map((c) => [c.name, c.source, (c.config as { command: string }).command])).toEqual([
    ['b', 'run', 'run-b'],
    ['a', 'worker', 'worker-a'],
    ['c', 'workspace', 'ws-c'],
  ]);
  expect(notes).toEqual([
    "worker server 'b' is ignored: the run's has that name",
    "workspace server 'a' is ignored: the worker's has that name",
  ]);
});

test("a run's tool definitions are kept within their budget: later tools are left out with a warning, the hash stays the server's", () => {
  const big = (name: string) => ({
    name,
    description: 'x'.repeat(1500),
    inputSchema: { type: 'object', properties: { a: { type: 'string', description: 'y'.repeat(10_000) } } },
  });
  const { tools } = toolEntries(
    's',
    Array.from({ length: 20 }, (_, i) => big(`t${i}`)),
  );
  expect(tools).toHaveLength(20);
  const listing = { name: 's', source: 'run' as const, transport: 'stdio' as const, tools, toolsHash: 'h' };
  const [bounded] = withinBudget([listing], MAX_MCP_TOOLS_BYTES);
  expect(bounded!.tools.length).toBeGreaterThan(0);
  expect(bounded!.tools.length).toBeLessThan(20);
  expect(JSON.stringify(bounded!.tools).length).toBeLessThanOrEqual(MAX_MCP_TOOLS_BYTES);
  expect(bounded!.toolsHash).toBe('h');
  expect(bounded!.warnings).toEqual([
    `s: ${20 - bounded!.tools.length} of 20 tools are left out: a run's MCP tool definitions are limited to 128 KiB`,
  ]);
});

test('hostile tool lists: nameless, schemaless, oversized and colliding tools are left out, each with a reason', () => {
  const { tools, warnings } = toolEntries('s', [
    { description: 'no name' },
    { name: 'a.b', inputSchema: { type: 'object' } },
    { name: 'a_b', inputSchema: { type: 'object' } },
    { name: 'array', inputSchema: { type: 'array' } },
    { name: 'huge', inputSchema: { type: 'object', description: 'z'.repeat(20_000) } },
    { name: 'n'.repeat(80), inputSchema: { type: 'object' } },
    { name: 'ok', inputSchema: { type: 'object', $schema: 'x' }, annotations: { readOnlyHint: 'yes' } },
  ]);
  expect(tools.map((t) => [t.name, t.tool, t.sideEffect])).toEqual([
    ['mcp__s__a_b', 'a.b', 'mutating'],
    ['mcp__s__ok', 'ok', 'mutating'],
  ]);
  expect(tools[1]!.inputSchema).toEqual({ type: 'object' });
  expect(warnings).toEqual([
    's: a tool without a name is left out',
    "s: tool 'a_b' is left out: another tool is also offered as 'mcp__s__a_b'",
    "s: tool 'array' is left out: its input schema is not a JSON object schema",
    expect.stringMatching(/^s: tool 'huge' is left out: its input schema is \d+ bytes \(limit 16384\)$/),
    expect.stringMatching(/is longer than 64$/),
  ]);
});
