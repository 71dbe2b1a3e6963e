/** A dependency-free stdio MCP server for sandbox tests: tool `environ` answers /proc/1/environ, `ping` answers pong. */
export const TEST_SERVER_SOURCE = `
const fs = require('node:fs');
const readline = require('node:readline');
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
function run(name) {
  if (name === 'environ') {
    try { return JSON.stringify(fs.readFileSync('/proc/1/environ', 'utf8').split('\\0').filter(Boolean)); }
    catch (e) { return 'unreadable: ' + e.message; }
  }
  return 'pong';
}
const tool = (name) => ({ name, description: name, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'test', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [tool('environ'), tool('ping')] } });
  else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: run(m.params.name) }] } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
});
`;
