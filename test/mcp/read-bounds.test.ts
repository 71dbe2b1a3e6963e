/**
 * Every read from an MCP server is bounded, and a call whose server went away ends: an HTTP
 * server's event-stream line that never ends (or `data:` lines that never end an event) is cut at
 * the message bound, not buffered until the worker's memory is gone; a JSON answer over the bound
 * is refused; a stream that ends, or a connection cut, before the answer fails the call at once
 * (read-only calls once more on a new session, others as of unknown outcome); a stdio answer over
 * the SDK's 10 MiB says so, instead of "the server closed the connection", and is not re-run.
 */
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import type { McpCallRef, McpServerListing } from '../../src/shared/mcp';
import { tempWorkspace } from '../support/temporal';
import { startHostileHttpServer, type HostileHttpServer } from './support/hostile-http-server';

jest.setTimeout(60_000);

let workspace: string;
let http: HostileHttpServer;
const runtimes: McpRuntime[] = [];
beforeEach(async () => {
  workspace = await tempWorkspace('mcp-bounds');
  http = await startHostileHttpServer();
});
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  await http.close();
});

function runtime() {
  const r = createMcpRuntime({ workspaceConfig: false, connectTimeoutMs: 10_000, workspaceRoots: [workspace] });
  runtimes.push(r);
  return r;
}
const ctx = () => ({
  workspace,
  network: false,
  toolUseId: 'toolu_b',
  signal: new AbortController().signal,
  heartbeat: () => {},
  // Long: what ends these calls must be the bounds, not the call's timeout.
  timeoutMs: 50_000,
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
/** The call's result, or a failure when it takes longer than `ms` (the old code waited for the timeout). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function listHttp(r: McpRuntime): Promise<McpServerListing> {
  const { servers } = await r.listForRun({
    runServers: { hostile: { type: 'http', url: http.url } },
    workspace,
    network: false,
  });
  expect(servers[0]!.error).toBeUndefined();
  return servers[0]!;
}

test('an event-stream line without end is cut at 10 MiB: the call ends with the bound named, memory stays flat', async () => {
  const r = runtime();
  const server = await listHttp(r);
  const before = process.memoryUsage().rss;
  for (const tool of ['endless', 'endless_lines']) {
    const result = await within(15_000, r.call(ref(server, tool), {}, ctx()));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/over 10 MiB, the limit of one MCP message/);
    // The answer's outcome (a mutating tool) is not claimed; the bound is not re-run.
    expect(result.content).not.toMatch(/retried/);
  }
  // The client stopped reading: the server could not go on writing (its socket was closed).
  const written = http.endlessBytes();
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(http.endlessBytes() - written).toBeLessThan(2 * 1024 * 1024);
  expect(written).toBeLessThan(100 * 1024 * 1024);
  expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1024 * 1024);
});

test('a JSON answer over 10 MiB is refused with the bound named', async () => {
  const r = runtime();
  const server = await listHttp(r);
  const result = await within(15_000, r.call(ref(server, 'huge_json'), {}, ctx()));
  expect(result.isError).toBe(true);
  expect(result.content).toMatch(/10 MiB/);
});

test('a stream that ends, or a connection cut, before the answer ends the call at once', async () => {
  const r = runtime();
  const server = await listHttp(r);
  const early = await within(8_000, r.call(ref(server, 'ends_early'), {}, ctx()));
  expect(early.isError).toBe(true);
  expect(early.content).toMatch(/closed its answer stream before answering/);
  // Mutating (no annotations): not re-run, its outcome unknown.
  expect(early.content).toMatch(/outcome is unknown/);
  const cut = await within(8_000, r.call(ref(server, 'cut_read'), {}, ctx()));
  expect(cut.isError).toBe(true);
  expect(cut.content).toMatch(/broke off|closed its answer stream/);
  // Read-only: tried once more on a new session, which broke off too.
  expect(cut.content).toMatch(/retried once on a new connection/);
});

test('a stdio answer over 10 MiB says so (not "closed the connection") and is not run twice', async () => {
  const log = path.join(workspace, 'calls.log');
  const script = path.join(workspace, '..', `big-answer-${path.basename(workspace)}.js`);
  await fs.writeFile(
    script,
    `
const fs = require('node:fs');
const readline = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'big', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'photo', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] } });
  else if (m.method === 'tools/call') {
    fs.appendFileSync(${JSON.stringify(log)}, 'call\\n');
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'image', mimeType: 'image/png', data: Buffer.alloc(8 * 1024 * 1024).toString('base64') }] } });
  }
});
`,
  );
  try {
    const r = runtime();
    const { servers } = await r.listForRun({
      runServers: { big: { command: process.execPath, args: [script] } },
      workspace,
      network: false,
    });
    const result = await within(20_000, r.call(ref(servers[0]!, 'photo'), {}, ctx()));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/over 10 MiB, the limit of one MCP message/);
    expect(result.content).toMatch(/image or file over about 7.5 MB/);
    expect(result.content).not.toMatch(/closed the connection/);
    expect(existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').length : 0).toBe(1);
  } finally {
    await fs.rm(script, { force: true });
  }
});
