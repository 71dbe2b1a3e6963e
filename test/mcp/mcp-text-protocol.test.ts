/**
 * MCP tools under the text tool protocol (`toolProtocol: 'xml'`): the real workflow and worker on
 * the test Temporal server, the scripted model writing `<tool_code>` blocks, and the real SDK test
 * server over stdio. The tools are described in the system prompt like the built-in ones, called
 * by name, and their results come back as observations.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createMcpRuntime, type McpRuntime } from '../../src/mcp';
import { ScriptedModel, text } from '../../src/models/scripted';
import type { Message, ModelRequest } from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { stdioTestServer } from './support/servers';

jest.setTimeout(120_000);
const { suite, start } = useWorkflowSuite('mcp-xml');

let runtime: McpRuntime;
let logFile: string;
beforeEach(() => {
  runtime = createMcpRuntime({ connectTimeoutMs: 20_000 });
  logFile = path.join(suite.workspace, 'server.log');
});
afterEach(() => runtime.close());

const call = (name: string, params: unknown) =>
  `<tool_code>\n<name>${name}</name>\n<parameters>${JSON.stringify(params)}</parameters>\n</tool_code>`;
const lines = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n') : []);
/** The text of the last message of a request: the observation of the call before it. */
function lastText(r: ModelRequest): string {
  const last = r.messages[r.messages.length - 1] as Message;
  if (typeof last.content === 'string') return last.content;
  return last.content.map((b) => ('text' in b && typeof b.text === 'string' ? b.text : '')).join('');
}

test('MCP tools are described in the system prompt, called with <tool_code> and answered with observations', async () => {
  const model = new ScriptedModel([
    text(`Looking it up.\n${call('mcp__test__lookup', { key: 'alpha' })}`),
    text(call('mcp__test__nope', {})),
    text(call('mcp__test__append_note', { note: 'hi' })),
    text('<final_answer>alpha is value-of-alpha</final_answer>'),
  ]);
  const result = await withWorker(suite.env, { model, deps: { mcp: runtime } }, async (tq) => {
    const handle = await start(tq, {
      toolProtocol: 'xml',
      mcpServers: { test: stdioTestServer({ MCP_TEST_LOG: logFile }) },
    });
    return runResult(handle);
  });
  expect(result.exitReason).toBe('completed');
  expect(result.finalText).toBe('alpha is value-of-alpha');

  const first = model.requests[0]!;
  // No native tools: every tool, built-in and MCP, is in the system prompt's definitions.
  expect(first.tools).toEqual([]);
  expect(first.system).toContain('<tool>\n<name>bash</name>\n<description>');
  expect(first.system).toContain(
    '<tool>\n<name>mcp__test__lookup</name>\n<description>Look a key up (read-only).</description>\n<parameters_schema>{',
  );
  const schema = /<name>mcp__test__lookup<\/name>[\s\S]*?<parameters_schema>(.*)<\/parameters_schema>/.exec(
    first.system ?? '',
  );
  expect(JSON.parse(schema![1]!)).toMatchObject({ type: 'object', properties: { key: { type: 'string' } } });

  expect(lastText(model.requests[1]!)).toBe('<observation tool="mcp__test__lookup">\nvalue-of-alpha\n</observation>');
  // A name the run does not offer is refused by the protocol, which lists the MCP tools among the available ones.
  const refused = lastText(model.requests[2]!);
  expect(refused).toContain("Tool 'mcp__test__nope' not found. Available tools:");
  expect(refused).toContain('mcp__test__append_note');
  expect(lastText(model.requests[3]!)).toBe('<observation tool="mcp__test__append_note">\nappended hi\n</observation>');
  expect(lines().map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['lookup alpha', 'append_note hi']);
});
