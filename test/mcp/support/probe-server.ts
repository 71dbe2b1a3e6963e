/**
 * A dependency-free MCP server (JSON-RPC over stdio, written by hand) whose one tool, `where`,
 * reports the process's working directory and search paths: what an operator server was started
 * with. Written as a file by the tests, run with `node`.
 */
export const WHERE_SERVER_SOURCE = `
const readline = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'where', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'where', description: 'where am I', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] } });
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify({ cwd: process.cwd(), PATH: process.env.PATH, NODE_PATH: process.env.NODE_PATH, PYTHONPATH: process.env.PYTHONPATH, PYTHONSAFEPATH: process.env.PYTHONSAFEPATH }) }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
});
`;
