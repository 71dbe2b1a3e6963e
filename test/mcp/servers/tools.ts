/**
 * The tools of the test MCP servers, written with the official SDK's `McpServer`: one per side-effect
 * class (read-only, idempotent, no annotations = mutating), a slow tool that reports progress and
 * notices cancellation, a tool that crashes its server mid-call, one that returns an image, tools
 * that wait for a file (for worker kills), and tools that change the tool list. Every execution is
 * appended to `MCP_TEST_LOG` (one line each), so tests count what ran and where.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function log(line: string): void {
  const file = process.env.MCP_TEST_LOG;
  if (file) appendFileSync(file, `${line} ${process.pid}\n`);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

export function createTestServer(name = 'test'): McpServer {
  const server = new McpServer({ name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  server.registerTool(
    'lookup',
    {
      description: 'Look a key up (read-only).',
      inputSchema: { key: z.string() },
      annotations: { readOnlyHint: true },
    },
    ({ key }) => {
      log(`lookup ${key}`);
      return text(`value-of-${key}`);
    },
  );
  server.registerTool(
    'set_value',
    {
      description: 'Set a value (idempotent).',
      inputSchema: { key: z.string(), value: z.string() },
      annotations: { idempotentHint: true },
    },
    ({ key, value }) => {
      log(`set_value ${key}=${value}`);
      return text(`set ${key}`);
    },
  );
  server.registerTool(
    'append_note',
    { description: 'Append a note (mutating: no annotations).', inputSchema: { note: z.string() } },
    ({ note }) => {
      log(`append_note ${note}`);
      return text(`appended ${note}`);
    },
  );
  server.registerTool(
    'slow',
    {
      description: 'Wait ms milliseconds, reporting progress.',
      inputSchema: { ms: z.number() },
      annotations: { readOnlyHint: true },
    },
    async ({ ms }, extra) => {
      log('slow started');
      const token = extra._meta?.progressToken;
      const steps = Math.max(1, Math.floor(ms / 100));
      for (let i = 1; i <= steps && !extra.signal.aborted; i++) {
        await sleep(ms / steps, extra.signal);
        if (token !== undefined) {
          await extra
            .sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
            })
            .catch(() => undefined);
        }
      }
      log(extra.signal.aborted ? 'slow cancelled' : 'slow finished');
      return text(`slept ${ms}`);
    },
  );
  server.registerTool(
    'crash',
    { description: 'Crash the server mid-call.', inputSchema: {}, annotations: { readOnlyHint: true } },
    () => {
      log('crash');
      process.exit(3);
    },
  );
  server.registerTool(
    'picture',
    { description: 'Return a 1x1 PNG.', inputSchema: {}, annotations: { readOnlyHint: true } },
    () => ({
      content: [
        { type: 'text' as const, text: 'here is a picture' },
        { type: 'image' as const, data: PNG_1X1, mimeType: 'image/png' },
      ],
    }),
  );
  for (const [tool, annotations] of [
    ['wait_read', { readOnlyHint: true }],
    ['wait_write', {}],
  ] as const) {
    server.registerTool(
      tool,
      { description: 'Wait until a file exists; return its content.', inputSchema: { path: z.string() }, annotations },
      async ({ path }, extra) => {
        log(`${tool} started`);
        while (!existsSync(path) && !extra.signal.aborted) await sleep(50, extra.signal);
        log(`${tool} finished`);
        return text(existsSync(path) ? readFileSync(path, 'utf8') : 'cancelled');
      },
    );
  }
  let added = 0;
  server.registerTool('add_tool', { description: 'Offer one more tool (the list changes).', inputSchema: {} }, () => {
    added += 1;
    const extraName = `extra_${added}`;
    server.registerTool(extraName, { description: 'An added tool.', inputSchema: {} }, () => text(`${extraName} ran`));
    return text(`added ${extraName}`);
  });
  const removable = server.registerTool('removable', { description: 'Goes away.', inputSchema: {} }, () =>
    text('still here'),
  );
  server.registerTool('remove_tool', { description: 'Remove the removable tool.', inputSchema: {} }, () => {
    removable.remove();
    return text('removed');
  });
  return server;
}
