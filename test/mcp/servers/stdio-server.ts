/** The test MCP server over stdio, as users run a server: a process the client starts. */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createTestServer } from './tools';

void createTestServer(process.env.MCP_TEST_NAME ?? 'test').connect(new StdioServerTransport());
