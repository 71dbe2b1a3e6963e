/**
 * The `run` flag table and the run input's schema stay in step: every field is set by a flag or
 * says where it comes from instead, each flag sets exactly the fields it declares, and what the
 * flags produce is input the schema accepts. The docs name every flag.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RUN_FLAGS, RUN_INPUT_WITHOUT_FLAG, runInputFromFlags, type RunFlagSpec } from '../../src/cli/run-flags';
import { agentRunInputSchema, parseRunInput } from '../../src/shared';

const flags: readonly RunFlagSpec[] = RUN_FLAGS;
const schemaFields = Object.keys(agentRunInputSchema().shape).sort();
const dir = mkdtempSync(path.join(os.tmpdir(), 'run-flags-'));
// The suite's roots hold the temp dir, and `--mcp-config` refuses a file in a root (a run could have
// written it): here the roots are a folder of their own, beside the files.
const savedRoots = process.env.DURABLE_AGENT_WORKSPACE_ROOTS;
beforeAll(() => {
  process.env.DURABLE_AGENT_WORKSPACE_ROOTS = mkdtempSync(path.join(os.tmpdir(), 'run-flags-root-'));
});
afterAll(() => {
  if (savedRoots === undefined) delete process.env.DURABLE_AGENT_WORKSPACE_ROOTS;
  else process.env.DURABLE_AGENT_WORKSPACE_ROOTS = savedRoots;
});
const files = {
  'output-schema': path.join(dir, 'schema.json'),
  'mcp-config': path.join(dir, 'mcp.json'),
};
writeFileSync(files['output-schema'], JSON.stringify({ type: 'object', properties: { n: { type: 'number' } } }));
writeFileSync(
  files['mcp-config'],
  JSON.stringify({ mcpServers: { docs: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }),
);

/** A value the flag accepts. */
function sample(flag: RunFlagSpec): unknown {
  if (flag.type === 'boolean') return true;
  if (flag.type === 'integer') return 3;
  if (flag.type === 'number') return 2.5;
  if (flag.choices) return flag.choices[flag.choices.length - 1];
  if (flag.name in files) return files[flag.name as keyof typeof files];
  if (flag.name === 'tool-choice') return 'bash';
  return 'some text';
}

test('every run-input field is set by a run flag or says where it comes from instead, never both', () => {
  const byFlag = new Set(flags.flatMap((f) => f.sets ?? []));
  const elsewhere = new Set(Object.keys(RUN_INPUT_WITHOUT_FLAG));
  expect([...byFlag].filter((field) => elsewhere.has(field))).toEqual([]);
  expect([...new Set([...byFlag, ...elsewhere])].sort()).toEqual(schemaFields);
});

test('each run flag sets exactly the input fields it declares', async () => {
  for (const flag of flags) {
    const input = await runInputFromFlags({ [flag.name]: sample(flag) });
    expect({ flag: flag.name, sets: Object.keys(input).sort() }).toEqual({
      flag: flag.name,
      sets: [...(flag.sets ?? [])].sort(),
    });
  }
});

test('all the flags at once make run input the schema accepts', async () => {
  const values = Object.fromEntries(flags.filter((f) => f.name !== 'system').map((f) => [f.name, sample(f)]));
  const input = await runInputFromFlags(values);
  expect(input).toMatchObject({ maxIterations: 3, maxBudgetUsd: 2.5, approveMutating: true, toolProtocol: 'xml' });
  expect(input.workspace).toBe(path.resolve('some text'));
  expect(input.mcpServers).toEqual({ docs: { type: 'http', url: 'http://127.0.0.1:1/mcp' } });
  const parsed = parseRunInput({ prompt: 'p', ...input, toolProtocol: 'native' });
  expect(parsed).toMatchObject({ ok: true });
});

test('flags not given set nothing, and a boolean flag sets its field only when given', async () => {
  expect(await runInputFromFlags({})).toEqual({});
  // A session goes before batch runs by default (priority 2); --priority overrides it.
  expect(await runInputFromFlags({ session: true, network: true })).toEqual({
    session: true,
    network: true,
    priority: 2,
  });
  expect(await runInputFromFlags({ session: true, priority: 4 })).toEqual({ session: true, priority: 4 });
});

test('docs/configuration.md names every run flag and the field it sets', () => {
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
  for (const flag of flags) {
    expect({ flag: flag.name, named: doc.includes(`--${flag.name}`) }).toEqual({ flag: flag.name, named: true });
    for (const field of flag.sets ?? []) expect(doc).toContain(`\`${field}\``);
  }
});

test('--tool-choice takes any and required (a tool call), a tool name, and refuses anything else', async () => {
  expect(await runInputFromFlags({ 'tool-choice': 'any' })).toEqual({ toolChoice: 'any' });
  expect(await runInputFromFlags({ 'tool-choice': 'required' })).toEqual({ toolChoice: 'required' });
  expect(await runInputFromFlags({ 'tool-choice': 'lookup_price' })).toEqual({
    toolChoice: { type: 'tool', name: 'lookup_price' },
  });
  await expect(runInputFromFlags({ 'tool-choice': 'not a tool' })).rejects.toThrow(
    'must be auto, none, any, required or a tool name',
  );
});
