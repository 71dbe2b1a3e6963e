/**
 * The worker's MCP runtime against real servers, without a workflow: listing and side-effect
 * classes, one pooled process for many calls, progress and cancellation reaching the server,
 * crashes, servers that fail to start or speak garbage, Streamable HTTP with a bearer token from
 * `${VAR}`, images stored (not inlined), and workspace servers confined to the bash sandbox.
 */
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { expandConfig } from '../../src/mcp/expand';
import type { McpCallRef, McpServerListing } from '../../src/shared/mcp';
import { sandboxStatus } from '../../src/sandbox';
import { tempWorkspace } from '../support/temporal';
import { filesystemServer, startHttpTestServer, stdioTestServer } from './support/servers';

jest.setTimeout(60_000);

let workspace: string;
let logFile: string;
const runtimes: McpRuntime[] = [];
beforeEach(async () => {
  workspace = await tempWorkspace('mcp-runtime');
  logFile = path.join(workspace, 'server.log');
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

function runtime(options: Parameters<typeof createMcpRuntime>[0] = {}) {
  // The workspace is the worker's only root: operator servers may start from the checkout and /tmp.
  const r = createMcpRuntime({
    workspaceConfig: true,
    connectTimeoutMs: 15_000,
    workspaceRoots: [workspace],
    ...options,
  });
  runtimes.push(r);
  return r;
}
const lines = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n') : []);
const ctx = (over: Partial<Parameters<McpRuntime['call']>[2]> = {}) => ({
  workspace,
  network: false,
  toolUseId: 'toolu_1',
  signal: new AbortController().signal,
  heartbeat: () => {},
  timeoutMs: 30_000,
  ...over,
});
function ref(listing: McpServerListing, tool: string): McpCallRef {
  const entry = listing.tools.find((t) => t.tool === tool)!;
  return {
    server: listing.name,
    tool,
    source: listing.source,
    ...(listing.config ? { config: listing.config } : {}),
    sideEffect: entry.sideEffect,
    toolsHash: listing.toolsHash,
  };
}

test('a stdio server is listed with its tools as mcp__<server>__<tool>, classes from their annotations', async () => {
  const r = runtime();
  const { servers, notes } = await r.listForRun({
    runServers: { test: stdioTestServer({ MCP_TEST_LOG: logFile }) },
    workspace,
    network: false,
  });
  expect(notes).toEqual([]);
  const [test] = servers;
  expect(test).toMatchObject({ name: 'test', source: 'run', transport: 'stdio' });
  expect(test!.error).toBeUndefined();
  const classes = Object.fromEntries(test!.tools.map((t) => [t.name, t.sideEffect]));
  expect(classes).toMatchObject({
    mcp__test__lookup: 'read_only',
    mcp__test__set_value: 'idempotent',
    mcp__test__append_note: 'mutating',
  });
  const lookup = test!.tools.find((t) => t.tool === 'lookup')!;
  expect(lookup.description).toBe('Look a key up (read-only).');
  expect(lookup.inputSchema).toMatchObject({ type: 'object', properties: { key: { type: 'string' } } });
});

test('one stdio process serves many calls (pooled), and a new one starts after the idle timeout', async () => {
  const r = runtime({ idleTimeoutMs: 300 });
  const { servers } = await r.listForRun({
    runServers: { test: stdioTestServer({ MCP_TEST_LOG: logFile }) },
    workspace,
    network: false,
  });
  const results = await Promise.all(
    [1, 2, 3, 4, 5].map((i) => r.call(ref(servers[0]!, 'lookup'), { key: `k${i}` }, ctx())),
  );
  expect(results.map((x) => x.content)).toEqual([1, 2, 3, 4, 5].map((i) => `value-of-k${i}`));
  expect(r.pool.opened).toBe(1);
  expect(new Set(lines().map((l) => l.split(' ').pop())).size).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(r.pool.size).toBe(0);
  await r.call(ref(servers[0]!, 'lookup'), { key: 'again' }, ctx());
  expect(r.pool.opened).toBe(2);
});

test('progress notifications reach the heartbeat; an abort sends notifications/cancelled to the server', async () => {
  const r = runtime();
  const { servers } = await r.listForRun({
    runServers: { test: stdioTestServer({ MCP_TEST_LOG: logFile }) },
    workspace,
    network: false,
  });
  const beats: string[] = [];
  const done = await r.call(ref(servers[0]!, 'slow'), { ms: 300 }, ctx({ heartbeat: (p) => beats.push(String(p)) }));
  expect(done.content).toBe('slept 300');
  // The last notification may race the result (the SDK drops progress after the response): the first ones arrive.
  expect(beats.slice(0, 2)).toEqual(['1/3 step 1', '2/3 step 2']);
  const abort = new AbortController();
  const call = r.call(ref(servers[0]!, 'slow'), { ms: 20_000 }, ctx({ signal: abort.signal }));
  await waitFor(() => lines().filter((l) => l.startsWith('slow started')).length === 2);
  abort.abort();
  const cancelled = await call;
  expect(cancelled).toMatchObject({ isError: true });
  expect(cancelled.content).toContain('cancelled');
  await waitFor(() => lines().some((l) => l.startsWith('slow cancelled')));
});

test('a server that crashes mid-call: an is_error result, and the next call gets a fresh process', async () => {
  const r = runtime();
  const { servers } = await r.listForRun({
    runServers: { test: stdioTestServer({ MCP_TEST_LOG: logFile }) },
    workspace,
    network: false,
  });
  const crashed = await r.call(ref(servers[0]!, 'crash'), {}, ctx());
  expect(crashed.isError).toBe(true);
  expect(crashed.content).toMatch(/closed the connection during the crash call/);
  // Read-only: retried once on a new connection (which crashed too).
  expect(lines().filter((l) => l.startsWith('crash')).length).toBe(2);
  const after = await r.call(ref(servers[0]!, 'lookup'), { key: 'x' }, ctx());
  expect(after).toEqual({ content: 'value-of-x', isError: false });
});

test('a server that cannot start or speaks garbage is an error for the listing and an is_error call, never a throw', async () => {
  const r = runtime({ connectTimeoutMs: 1500 });
  const { servers } = await r.listForRun({
    runServers: {
      missing: { command: path.join(os.tmpdir(), 'no-such-dir-of-durable-agent', 'no-such-server') },
      garbage: { command: process.execPath, args: ['-e', 'setInterval(() => console.log("not json-rpc {"), 20)'] },
    },
    workspace,
    network: false,
  });
  const byName = Object.fromEntries(servers.map((s) => [s.name, s]));
  // Started under setpriv (so it dies with its worker): setpriv names the missing program.
  expect(byName.missing!.error).toMatch(/no-such-server: No such file or directory|ENOENT/);
  expect(byName.garbage!.error).toMatch(/no answer to initialize and tools\/list within 1500 ms/);
  expect(byName.garbage!.tools).toEqual([]);
  const call = await r.call(
    {
      server: 'garbage',
      tool: 'x',
      source: 'run',
      config: byName.garbage!.config!,
      sideEffect: 'read_only',
      toolsHash: '',
    },
    {},
    ctx(),
  );
  expect(call.isError).toBe(true);
  expect(call.content).toMatch(/MCP server 'garbage': could not be started or reached/);
});

test('Streamable HTTP: the bearer token comes from ${VAR} on the worker, one session serves the calls', async () => {
  const http = await startHttpTestServer('s3cret');
  try {
    const r = runtime({ env: { MCP_TOKEN: 's3cret' } });
    const config = { type: 'http' as const, url: http.url, headers: { Authorization: 'Bearer ${MCP_TOKEN}' } };
    const { servers } = await r.listForRun({ runServers: { remote: config }, workspace, network: false });
    expect(servers[0]!.error).toBeUndefined();
    // What the run records is the configuration as written: the token is not in it.
    expect(JSON.stringify(servers[0])).not.toContain('s3cret');
    for (const key of ['a', 'b', 'c']) {
      expect(await r.call(ref(servers[0]!, 'lookup'), { key }, ctx())).toEqual({
        content: `value-of-${key}`,
        isError: false,
      });
    }
    expect(http.sessions()).toBe(1);
    const wrong = runtime({ env: { MCP_TOKEN: 'wrong' } });
    const refused = await wrong.listForRun({ runServers: { remote: config }, workspace, network: false });
    expect(refused.servers[0]!.error).toBeDefined();
    expect(http.refused()).toBeGreaterThan(0);
    const unset = await runtime({ env: {} }).listForRun({ runServers: { remote: config }, workspace, network: false });
    expect(unset.servers[0]!.error).toBe('environment variable MCP_TOKEN not set on the worker');
  } finally {
    await http.close();
  }
});

test('images are saved to the workspace and described; the text never holds the base64 data', async () => {
  const r = runtime();
  const { servers } = await r.listForRun({ runServers: { test: stdioTestServer() }, workspace, network: false });
  const result = await r.call(ref(servers[0]!, 'picture'), {}, ctx({ toolUseId: 'toolu_pic' }));
  expect(result.isError).toBe(false);
  expect(result.content).toMatch(
    /^here is a picture\n\[image, image\/png, \d+ bytes, saved to \.durable-agent\/spill\/toolu_pic-1\.png\]$/,
  );
  const png = await fs.readFile(path.join(workspace, '.durable-agent/spill/toolu_pic-1.png'));
  expect(png.subarray(1, 4).toString()).toBe('PNG');
});

test('a tool list change (notifications/tools/list_changed) is reported by the next call result', async () => {
  const r = runtime();
  const { servers } = await r.listForRun({ runServers: { test: stdioTestServer() }, workspace, network: false });
  const first = await r.call(ref(servers[0]!, 'lookup'), { key: 'a' }, ctx());
  expect(first.toolsChanged).toBeUndefined();
  const added = await r.call(ref(servers[0]!, 'add_tool'), {}, ctx());
  await new Promise((resolve) => setTimeout(resolve, 100));
  const next = await r.call(ref(servers[0]!, 'lookup'), { key: 'b' }, ctx());
  expect(Boolean(added.toolsChanged) || Boolean(next.toolsChanged)).toBe(true);
  const relisted = await r.listServers(
    [{ name: 'test', source: 'run', config: servers[0]!.config! }],
    workspace,
    false,
  );
  expect(relisted[0]!.tools.map((t) => t.name)).toContain('mcp__test__extra_1');
  expect(relisted[0]!.toolsHash).not.toBe(servers[0]!.toolsHash);
});

test('the published filesystem server runs through its bin and its read-only tools are classed so', async () => {
  await fs.writeFile(path.join(workspace, 'hello.txt'), 'hello from the workspace\n');
  const r = runtime();
  const { servers } = await r.listForRun({
    runServers: { files: filesystemServer(workspace) },
    workspace,
    network: false,
  });
  expect(servers[0]!.error).toBeUndefined();
  const read = servers[0]!.tools.find((t) => t.tool === 'read_text_file' || t.tool === 'read_file')!;
  expect(read.sideEffect).toBe('read_only');
  const result = await r.call(ref(servers[0]!, read.tool), { path: path.join(workspace, 'hello.txt') }, ctx());
  expect(result).toEqual({ content: 'hello from the workspace\n', isError: false });
});

const maybe = sandboxStatus().mode === 'bwrap' ? test : test.skip;
maybe(
  'a workspace .mcp.json stdio server runs in the sandbox: no worker secrets, no files outside, no network',
  async () => {
    // A dependency-free MCP server (JSON-RPC over stdio by hand): the sandbox mounts only the system and the workspace.
    const outside = path.join(os.tmpdir(), `mcp-outside-${Date.now()}.txt`);
    await fs.writeFile(outside, 'worker file');
    const http = await startHttpTestServer('t');
    await fs.writeFile(path.join(workspace, 'probe-server.js'), probeServerSource(outside, http.url));
    await fs.writeFile(
      path.join(workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { probe: { command: 'node', args: [path.join(workspace, 'probe-server.js')] } } }),
    );
    process.env.DA_TEST_WORKER_SECRET = 'do-not-leak';
    try {
      const r = runtime();
      const { servers } = await r.listForRun({ workspace, network: false });
      const probe = servers.find((s) => s.name === 'probe')!;
      expect(probe).toMatchObject({ source: 'workspace', sandboxed: true });
      expect(probe.error).toBeUndefined();
      const result = await r.call(ref(probe, 'probe'), {}, ctx());
      const seen = JSON.parse(result.content) as { env: string[]; outside: string; net: string; ws: string };
      expect(seen.env).not.toContain('DA_TEST_WORKER_SECRET');
      expect(seen.env.some((k) => k.startsWith('ANTHROPIC') || k.startsWith('TEMPORAL'))).toBe(false);
      expect(seen.outside).toBe('unreadable');
      expect(seen.net).toBe('no network');
      expect(seen.ws).toBe('writable');
      // A workspace HTTP server needs the run's network.
      await fs.writeFile(
        path.join(workspace, '.mcp.json'),
        JSON.stringify({
          mcpServers: { remote: { type: 'http', url: http.url, headers: { Authorization: 'Bearer ${X:-t}' } } },
        }),
      );
      const offline = await runtime().listForRun({ workspace, network: false });
      expect(offline.servers[0]!.error).toMatch(/needs network access/);
      const online = await runtime().listForRun({ workspace, network: true });
      expect(online.servers[0]!.error).toBeUndefined();
      // ${VAR} from the worker's environment is refused for workspace servers.
      await fs.writeFile(
        path.join(workspace, '.mcp.json'),
        JSON.stringify({
          mcpServers: {
            remote: { type: 'http', url: http.url, headers: { Authorization: 'Bearer ${DA_TEST_WORKER_SECRET}' } },
          },
        }),
      );
      const leak = await runtime().listForRun({ workspace, network: true });
      expect(leak.servers[0]!.error).toMatch(/cannot use the worker's environment variables \(DA_TEST_WORKER_SECRET\)/);
    } finally {
      delete process.env.DA_TEST_WORKER_SECRET;
      await http.close();
      await fs.rm(outside, { force: true });
    }
  },
);

test('a worker with runServers: false refuses the servers a run names, and calls to them', async () => {
  const r = runtime({ runServers: false, servers: { own: stdioTestServer() } });
  const { servers, notes } = await r.listForRun({ runServers: { test: stdioTestServer() }, workspace, network: false });
  expect(servers.map((s) => [s.name, s.source])).toEqual([['own', 'worker']]);
  expect(notes).toEqual(["this worker does not take a run's own MCP servers (runServers: false); they are not used"]);
  const call = await r.call(
    {
      server: 'test',
      tool: 'lookup',
      source: 'run',
      config: stdioTestServer(),
      sideEffect: 'read_only',
      toolsHash: '',
    },
    { key: 'x' },
    ctx(),
  );
  expect(call).toEqual({
    content: "Error: MCP server 'test': this worker does not take a run's own MCP servers (runServers: false)",
    isError: true,
  });
  expect(r.pool.opened).toBe(1);
});

test('${VAR} and ${VAR:-default} expand as in Claude Code; a missing variable is named', () => {
  const env = { HOST: 'example.org', EMPTY: '' };
  expect(
    expandConfig({ type: 'http', url: 'https://${HOST}/${PATH_PART:-mcp}', headers: { A: '${EMPTY:-d}' } }, env),
  ).toEqual({ ok: true, config: { type: 'http', url: 'https://example.org/mcp', headers: { A: 'd' } } });
  expect(expandConfig({ command: '${BIN}', args: ['${HOST}'], env: { K: '${NOPE}' } }, env)).toEqual({
    ok: false,
    missing: ['BIN', 'NOPE'],
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** An MCP server with one tool that reports what its process can see and do. */
function probeServerSource(outside: string, url: string): string {
  return `
const fs = require('node:fs');
const readline = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
async function probe() {
  let outside = 'unreadable';
  try { fs.readFileSync(${JSON.stringify(outside)}); outside = 'readable'; } catch {}
  let ws = 'writable';
  try { fs.writeFileSync(__dirname + '/written.txt', 'x'); } catch { ws = 'read-only'; }
  let net = 'no network';
  try { await fetch(${JSON.stringify(url)}); net = 'network'; } catch {}
  return { env: Object.keys(process.env), outside, net, ws };
}
readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'probe', description: 'probe', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] } });
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(await probe()) }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
});
`;
}
