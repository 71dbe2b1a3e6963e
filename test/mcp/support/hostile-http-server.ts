/**
 * A Streamable HTTP MCP server written by hand (plain `node:http`), for what the SDK's server never
 * does: a tool whose answer is one event-stream line that never ends, one whose stream ends (or
 * whose connection is cut) before the answer, and one whose answer is a JSON body over 10 MiB.
 * It counts the bytes it wrote, so a test sees when the client stopped reading.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HostileHttpServer {
  url: string;
  /** Bytes written by the endless tool so far. */
  endlessBytes(): number;
  close(): Promise<void>;
}

const TOOLS = [
  { name: 'endless', description: 'One SSE line without end.', inputSchema: { type: 'object' } },
  { name: 'endless_lines', description: 'data: lines without an event end.', inputSchema: { type: 'object' } },
  { name: 'ends_early', description: 'The stream ends before the answer.', inputSchema: { type: 'object' } },
  {
    name: 'cut_read',
    description: 'The connection is cut mid-stream (read-only).',
    inputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
  },
  { name: 'huge_json', description: 'A JSON answer over 10 MiB.', inputSchema: { type: 'object' } },
];

/** Stops writing an endless answer here: the test's own bound, so a client that never stops is not fed forever. */
const MAX_ENDLESS_BYTES = 400 * 1024 * 1024;

export async function startHostileHttpServer(): Promise<HostileHttpServer> {
  let endless = 0;
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number;
        method: string;
        params?: { name?: string; protocolVersion?: string };
      };
      const json = (result: unknown) =>
        res
          .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'hostile' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      if (msg.id === undefined) return void res.writeHead(202).end();
      if (msg.method === 'initialize') {
        return json({
          protocolVersion: msg.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'hostile', version: '1' },
        });
      }
      if (msg.method === 'tools/list') return json({ tools: TOOLS });
      const tool = msg.params?.name;
      if (tool === 'huge_json') return json({ content: [{ type: 'text', text: 'x'.repeat(11 * 1024 * 1024) }] });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (tool === 'endless' || tool === 'endless_lines') {
        res.write('event: message\ndata: ');
        const piece = tool === 'endless' ? 'x'.repeat(256 * 1024) : 'data: x\n'.repeat(32 * 1024);
        const timer = setInterval(() => {
          if (res.destroyed || endless > MAX_ENDLESS_BYTES) return void clearInterval(timer);
          endless += piece.length;
          res.write(piece);
        }, 2);
        res.on('close', () => clearInterval(timer));
        return;
      }
      // A progress notification first, then the stream goes away without the answer.
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`,
      );
      setTimeout(() => (tool === 'cut_read' ? res.destroy() : res.end()), 100);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    endlessBytes: () => endless,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
