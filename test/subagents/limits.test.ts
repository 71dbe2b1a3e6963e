import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, delayed, text, toolUse } from '../../src/models/scripted';
import { ToolRegistry } from '../../src/tools';
import { createGlobTool } from '../../src/tools/glob';
import { createReadFileTool } from '../../src/tools/read-file';
import { toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('subagent-limits');

const names = (tools: { name: string }[] | undefined) => (tools ?? []).map((t) => t.name).sort();

test('a named agent from the input runs with its prompt and only the tools both it and its parent have', async () => {
  const parent = new ScriptedModel([
    toolUse([
      { id: 't1', name: 'task', input: { prompt: 'child: review', agent: 'reviewer' } },
      { id: 't2', name: 'task', input: { prompt: 'child: other', agent: 'nobody' } },
    ]),
    text('Reviewed.'),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'c1', name: 'write_file', input: { path: 'sneaky.txt', content: 'x' } }]),
    text('Looks fine.'),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, {
      tools: ['read_file', 'task'],
      maxSubagentDepth: 1,
      agents: {
        reviewer: {
          description: 'Reviews changes',
          prompt: 'You are a careful reviewer.',
          tools: ['read_file', 'write_file'],
        },
      },
    });
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    // The parent's model saw the agent listed in the task tool's description.
    const taskSpec = parent.requests[0]!.tools.find((t) => t.name === 'task');
    expect(taskSpec?.description).toContain('- reviewer: Reviews changes');
    // The child: its agent's prompt, read_file only (the parent lacks write_file), no task at the depth limit.
    expect(names(child.requests[0]!.tools)).toEqual(['read_file']);
    expect(JSON.stringify(child.requests[0]!.system)).toContain('You are a careful reviewer.');
    const [refused] = toolResults(child.requests[1]!.messages[2]);
    expect(refused!.is_error).toBe(true);
    expect(refused!.content).toContain("Tool 'write_file' not found");
    const [reviewed, unknown] = toolResults(parent.requests[1]!.messages[2]);
    expect(reviewed!.content).toBe('Looks fine.');
    expect(unknown!.is_error).toBe(true);
    expect(unknown!.content).toContain("unknown agent 'nobody'. Available agents: reviewer");
  });
  await expect(fs.stat(path.join(suite.workspace, 'sneaky.txt'))).rejects.toThrow();
});

test('a run at the depth limit is not offered task', async () => {
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: go deeper' } }]),
    text('Done.'),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'c1', name: 'task', input: { prompt: 'grandchild: hello' } }]),
    text('Could not.'),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const result = await (await start(tq, { tools: ['read_file', 'task'], maxSubagentDepth: 1 })).result();
    expect(result.exitReason).toBe('completed');
    expect(names(parent.requests[0]!.tools)).toEqual(['read_file', 'task']);
    expect(names(child.requests[0]!.tools)).toEqual(['read_file']);
    const [refused] = toolResults(child.requests[1]!.messages[2]);
    expect(refused!.is_error).toBe(true);
    expect(refused!.content).toContain("Tool 'task' not found");
  });
});

test("spending the tree's budget inside one subagent stops its running sibling and the parent calls the model no more", async () => {
  // claude-haiku-4-5: 1 USD per million input tokens. The budget is 0.5 USD.
  const parent = new ScriptedModel([
    toolUse(
      [
        { id: 't1', name: 'task', input: { prompt: 'child A: spend' } },
        { id: 't2', name: 'task', input: { prompt: 'child B: wait' } },
      ],
      { usage: { inputTokens: 100_000 } },
    ),
  ]);
  const a = new ScriptedModel([
    delayed(1_000, toolUse([{ id: 'a1', name: 'glob', input: { pattern: '*' } }], { usage: { inputTokens: 450_000 } })),
  ]);
  const b = new ScriptedModel([delayed(120_000, text('never'))]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, 'child A': a, 'child B': b }) }, async (tq) => {
    const handle = await start(tq, { model: 'claude-haiku-4-5', maxBudgetUsd: 0.5, tools: ['glob', 'task'] });
    const running = await waitForState(handle, (s) => (s.subagents?.length ?? 0) === 2);
    expect(running.costUsd).toBeCloseTo(0.1, 6);
    const began = Date.now();
    const result = await handle.result();
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(result.exitReason).toBe('max_budget');
    // The tree's spend: the parent's call and child A's.
    expect(result.usage.inputTokens).toBe(550_000);
    expect(result.costUsd).toBeCloseTo(0.55, 6);
    const described = await suite.env.client.workflow.getHandle(`${handle.workflowId}.task-2`).describe();
    expect(described.status.name).toBe('CANCELLED');
  });
  expect(parent.requests).toHaveLength(1);
  expect(b.requests).toHaveLength(1);
});

test("a parent without a tool list gives its subagent the worker's tools, whatever the worker registers", async () => {
  // A worker with a registry of its own: two tools, none of the other built-in ones.
  const tools = new ToolRegistry([createReadFileTool(), createGlobTool()]);
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: look around' } }]),
    text('Looked.'),
  ]);
  const child = new ScriptedModel([text('Nothing here.')]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }), deps: { tools } }, async (tq) => {
    const result = await (await start(tq, { maxSubagentDepth: 1 })).result();
    expect(result.exitReason).toBe('completed');
  });
  expect(names(parent.requests[0]!.tools)).toEqual(['glob', 'read_file', 'task']);
  expect(names(child.requests[0]!.tools)).toEqual(['glob', 'read_file']);
  expect(toolResults(parent.requests[1]!.messages[2])[0]!.content).toBe('Nothing here.');
});
