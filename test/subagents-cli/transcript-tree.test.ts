import { WorkflowNotFoundError } from '@temporalio/client';
import type { Transcript } from '../../src/cli/transcript';
import {
  ChildRecords,
  MAX_TREE_DEPTH,
  MAX_TREE_RUNS,
  matchChildren,
  readTree,
} from '../../src/client/transcript/subagents';
import type { Message } from '../../src/shared';

/** Which task call a child answers, and the bounds of reading a tree, on built transcripts (no server). */

function transcript(workflowId: string, messages: Message[] = []): Transcript {
  return {
    workflowId,
    status: 'completed',
    system: null,
    systemSource: null,
    executions: [],
    messages,
    compactions: [],
  };
}
const task = (id: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, id, name: 'task', input });

test("a child is matched to the task call whose id its input carries, else by prompt, else by its '.task-<n>'", () => {
  const parent = transcript('p', [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: [
        task('toolu_a', { prompt: 'tests', agent: 'tester', description: 'run tests' }),
        task('toolu_b', { prompt: 'lint' }),
        task('toolu_c', { prompt: 'docs' }),
      ],
    },
  ]);
  const matched = matchChildren(parent, [
    { workflowId: 'p.task-2', input: { prompt: 'something else', parent: { toolUseId: 'toolu_a' } } },
    { workflowId: 'p.task-9', input: { prompt: 'lint' } },
    { workflowId: 'p.task-3', input: { prompt: 'rewritten by the workflow' } },
    { workflowId: 'p.task-4', input: 'not an object' },
  ]);
  expect(matched).toEqual([
    { workflowId: 'p.task-2', toolUseId: 'toolu_a', agent: 'tester', description: 'run tests' },
    { workflowId: 'p.task-9', toolUseId: 'toolu_b' },
    { workflowId: 'p.task-3', toolUseId: 'toolu_c' },
    { workflowId: 'p.task-4', toolUseId: null },
  ]);
});

/** A fake history reader: each run's children by id (a run missing from the map does not exist). */
function reader(tree: Record<string, string[]>) {
  const reads: string[] = [];
  const read = (id: string) => {
    reads.push(id);
    const kids = tree[id];
    if (!kids) return Promise.reject(new WorkflowNotFoundError('gone', id, undefined));
    const children = new ChildRecords();
    kids.forEach((kid, i) => {
      children.add({
        kind: 'child_initiated',
        eventId: String(i),
        workflowId: kid,
        workflowType: 'agentWorkflow',
        input: {},
      });
      children.add({ kind: 'child_started', initiatedEventId: String(i) });
    });
    return Promise.resolve({ transcript: transcript(id), children });
  };
  return { read, reads };
}

test('hostile trees: a child that does not exist, a cycle, a chain deeper than the bound, more runs than the bound', async () => {
  const { read } = reader({ p: ['p.task-1', 'p.task-2'], 'p.task-2': ['p'] });
  const t = await readTree(read, 'p');
  expect(t.subagents?.map((s) => s.note)).toEqual(['no such run (deleted, or past the retention period)', undefined]);
  expect(t.subagents?.[1]?.transcript?.subagents?.[0]).toMatchObject({
    workflowId: 'p',
    note: 'shown already (the tree has a cycle)',
  });

  const chain: Record<string, string[]> = {};
  let id = 'c';
  for (let d = 0; d <= MAX_TREE_DEPTH + 2; d++) chain[id] = [(id = `${id}.task-1`)];
  const deep = reader(chain);
  let node: Transcript | undefined = await readTree(deep.read, 'c');
  let levels = 0;
  while (node?.subagents?.[0]?.transcript) {
    node = node.subagents[0].transcript;
    levels++;
  }
  expect(levels).toBe(MAX_TREE_DEPTH);
  expect(node?.subagents?.[0]?.note).toMatch(
    /^deeper than \d+ levels: read it with durable-agent transcript c\.task-1/,
  );

  const leaves = reader({
    w: Array.from({ length: MAX_TREE_RUNS + 5 }, (_, i) => `w.task-${i + 1}`),
    ...Object.fromEntries(Array.from({ length: MAX_TREE_RUNS + 5 }, (_, i) => [`w.task-${i + 1}`, []])),
  });
  const w = await readTree(leaves.read, 'w');
  expect(leaves.reads).toHaveLength(MAX_TREE_RUNS);
  expect(w.subagents?.filter((s) => s.note?.startsWith(`more than ${MAX_TREE_RUNS} runs`))).toHaveLength(6);
});

test('a child of another workflow type, or one whose start failed (no started event), is no subagent', () => {
  const children = new ChildRecords();
  children.add({ kind: 'child_initiated', eventId: '5', workflowId: 'p.other', workflowType: 'myWorkflow', input: {} });
  children.add({ kind: 'child_started', initiatedEventId: '5' });
  children.add({
    kind: 'child_initiated',
    eventId: '6',
    workflowId: 'p.task-1',
    workflowType: 'agentWorkflow',
    input: {},
  });
  expect(children.started).toEqual([]);
});
