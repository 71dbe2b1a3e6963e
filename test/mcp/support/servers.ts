/**
 * Real MCP servers for the tests: the test server (servers/tools.ts, the official SDK) started as
 * a stdio process the way users configure one, or served over Streamable HTTP from this process;
 * and the published filesystem server run through its npm bin.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServerConfig } from '../../../src/shared/mcp';
import { createTestServer } from '../servers/tools';

function resolveOptional(id: string): string | undefined {
  try {
    return require.resolve(id);
  } catch {
    return undefined;
  }
}

/** Runs a TypeScript file with node (compiled by @swc/core on load, as the fault tests' workers are). */
const TS_ENTRY = `
const fs = require('node:fs');
const swc = require(${JSON.stringify(resolveOptional('@swc/core') ?? '@swc/core')});
require.extensions['.ts'] = function (module, filename) {
  const code = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' },
  }).code;
  module._compile(code, filename);
};
require(require('node:path').resolve(process.argv[1]));
`;

/** The test server as a stdio server configuration (`{command, args, env}`). */
export function stdioTestServer(env: Record<string, string> = {}): McpServerConfig {
  return {
    command: process.execPath,
    args: ['-e', TS_ENTRY, path.join(__dirname, '..', 'servers', 'stdio-server.ts')],
    env,
  };
}

/** The published filesystem server, run through its bin as a user's `.mcp.json` would. */
export function filesystemServer(dir: string): McpServerConfig {
  return {
    command: path.join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'mcp-server-filesystem'),
    args: [dir],
  };
}

export interface HttpTestServer {
  url: string;
  /** Sessions opened so far (one per client connection). */
  sessions(): number;
  /** Requests refused for a missing or wrong bearer token. */
  refused(): number;
  close(): Promise<void>;
}

/** The test server over Streamable HTTP (stateful sessions), requiring `Authorization: Bearer <token>`. */
export async function startHttpTestServer(token: string): Promise<HttpTestServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let opened = 0;
  let refused = 0;
  const http: Server = createServer((req, res) => {
    void (async () => {
      if (req.headers.authorization !== `Bearer ${token}`) {
        refused += 1;
        res.writeHead(401).end('unauthorized');
        return;
      }
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? transports.get(id) : undefined;
      if (!transport) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => {
            opened += 1;
            transports.set(sid, transport!);
          },
        });
        await createTestServer('http').connect(transport);
      }
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions: () => opened,
    refused: () => refused,
    close: async () => {
      for (const t of transports.values()) await t.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
