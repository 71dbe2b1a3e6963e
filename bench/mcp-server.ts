/**
 * The MCP server the MCP figure calls: the official SDK's `McpServer` over stdio with one
 * read-only `echo` tool, so what is measured is the path to the server and back, not the tool.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'bench', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echo the text.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
  ({ text }) => ({ content: [{ type: 'text', text }] }),
);
void server.connect(new StdioServerTransport());
