/**
 * Tool names are checked as the providers check them (1-64 of [a-zA-Z0-9_-]), where a tool is made
 * (`defineTool`) and where a worker's tools are put together (the registry, and so the plugin's
 * `activityDeps` at worker start): a name the provider would refuse, the subagent tool's `task`, an
 * MCP-looking name, a duplicate or a built-in's name is refused with a message saying what is accepted.
 */
import { z } from 'zod';
import { activityDeps } from '../../src/plugin/options';
import { toolNameProblem } from '../../src/shared/tool-name';
import { createBuiltinTools, defineTool, ToolRegistry, type Tool } from '../../src/tools';

/** A tool written without `defineTool` (an object literal), as an application may pass one. */
const plain = (name: string): Tool => ({
  name,
  description: 'A tool.',
  inputSchema: z.object({}),
  sideEffect: 'read_only',
  execute: async () => 'ok',
});

const refused = ['my tool', 'héllo', 'naïve_tool', '', 'x'.repeat(65), 'a.b', 'tool/1', 'task', 'mcp__gh__issues'];
const accepted = ['lookup_price', 'a-b', 'A1', 'x'.repeat(64), 'constructor', 'toString'];

test.each(refused)('defineTool refuses %j with a message that says what is accepted', (name) => {
  expect(() => defineTool(plain(name))).toThrow(/defineTool: tool name .* (not accepted|reserved)/);
  expect(toolNameProblem(name)).toBeDefined();
});

test.each(accepted)('defineTool accepts %j', (name) => {
  expect(defineTool(plain(name)).name).toBe(name);
});

test('the accepted-names message names the rule', () => {
  expect(toolNameProblem('my tool')).toContain("1 to 64 ASCII letters, digits, '_' or '-'");
  expect(toolNameProblem('task')).toContain('subagent');
});

test.each(refused)('the registry refuses a tool named %j made without defineTool', (name) => {
  expect(() => new ToolRegistry([...createBuiltinTools(), plain(name)])).toThrow(/Tool refused: tool name/);
});

test.each(['bash', 'read_file', 'done'])('a custom tool named like the built-in %s is refused', (name) => {
  expect(() => new ToolRegistry([...createBuiltinTools(), plain(name)])).toThrow(
    new RegExp(`Tool '${name}' is already registered: .*built-in tool's name\\. Names taken: bash, .*task`),
  );
});

test('two custom tools with one name are refused', () => {
  expect(() => new ToolRegistry([plain('lookup'), plain('lookup')])).toThrow(/'lookup' is already registered/);
});

test('worker start (the plugin\u2019s activity dependencies) refuses a bad custom tool name', () => {
  expect(() => activityDeps({ tools: [plain('task')] })).toThrow(/reserved/);
  expect(() => activityDeps({ tools: [plain('look up')] })).toThrow(/not accepted/);
  expect(() => activityDeps({ tools: [plain('grep')] })).toThrow(/already registered/);
  expect(activityDeps({ tools: [plain('lookup_price')] }).tools.has('lookup_price')).toBe(true);
});
