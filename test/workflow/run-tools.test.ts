import { z } from 'zod';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery, parseRunInput } from '../../src/shared';
import { createDefaultRegistry, defineTool } from '../../src/tools';
import { runResult, toolResults } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite, start } = useWorkflowSuite('run-tools');

/** The worker's tools: the built-in ones and an application's own `lookup_price`. */
function registry() {
  return createDefaultRegistry().register(
    defineTool({
      name: 'lookup_price',
      description: 'The price of an item, in cents.',
      inputSchema: z.strictObject({ item: z.string() }),
      sideEffect: 'read_only',
      async execute({ item }) {
        return `${item}: 1234 cents`;
      },
    }),
  );
}

test("a run's tools may name only the application's own tool: the model is offered that one alone", async () => {
  expect(parseRunInput({ prompt: 'p', tools: ['lookup_price'] }).ok).toBe(true);
  const model = new ScriptedModel([
    toolUse([{ id: 'c1', name: 'lookup_price', input: { item: 'tea' } }]),
    toolUse([{ id: 'c2', name: 'bash', input: { command: 'ls' } }]),
    text('Tea costs 12.34.'),
  ]);
  await withWorker(suite.env, { model, deps: { tools: registry() } }, async (tq) => {
    const result = await runResult(await start(tq, { tools: ['lookup_price'] }));
    expect(result.exitReason).toBe('completed');
  });
  expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['lookup_price']);
  expect(toolResults(model.requests[1]!.messages.at(-1))[0]).toMatchObject({ content: 'tea: 1234 cents' });
  // The unknown-tool message names only this run's tools, and says the tool is unknown.
  const [refused] = toolResults(model.requests[2]!.messages.at(-1));
  expect(refused).toMatchObject({
    is_error: true,
    content: "Error: Tool 'bash' not found. Unknown tool; this run's tools are: lookup_price.",
  });
});

test('a tool name the worker lacks is said at run start, and the run goes on with the others', async () => {
  const model = new ScriptedModel([text('Fine.')]);
  await withWorker(suite.env, { model, deps: { tools: registry() } }, async (tq) => {
    const handle = await start(tq, { tools: ['read_file', 'lookup_prize'] });
    expect((await runResult(handle)).exitReason).toBe('completed');
    const { events } = await handle.query(eventsQuery, { after: 0 });
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'notice', message: expect.stringContaining('lookup_prize') }),
    );
  });
  expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['read_file']);
});

test('a tool name that no tool can have is refused at the start, saying what is accepted', () => {
  const parsed = parseRunInput({ prompt: 'p', tools: ['look up'] });
  expect(parsed.ok).toBe(false);
  expect(parsed.ok ? '' : parsed.error).toContain("tool name 'look up' is not a tool name");
});

test("under the text protocol a worker's custom tool is offered and callable", async () => {
  const call = '<tool_code>\n<name>lookup_price</name>\n<parameters>{"item": "tea"}</parameters>\n</tool_code>';
  const model = new ScriptedModel([text(call), text('<final_answer>Tea costs 12.34.</final_answer>')]);
  await withWorker(suite.env, { model, deps: { tools: registry() } }, async (tq) => {
    const result = await runResult(await start(tq, { toolProtocol: 'xml' }));
    expect(result.exitReason).toBe('completed');
    expect(result.finalText).toBe('Tea costs 12.34.');
  });
  expect(JSON.stringify(model.requests[0])).toContain('<name>lookup_price</name>');
  expect(JSON.stringify(model.requests[1]!.messages.at(-1))).toContain('tea: 1234 cents');
});
