import { listRuns } from '../../src/cli/list-command';
import { SubagentProgress } from '../../src/cli/subagent-progress';
import { transcriptCommand, type Transcript } from '../../src/cli/transcript';
import { queryEvents, type AgentHandle } from '../../src/client';
import { ScriptedModel, text } from '../../src/models/scripted';
import type { RunEvent } from '../../src/shared';
import { createAgentWorker } from '../../src/worker';
import { createDefaultRegistry } from '../../src/tools';
import { connectTestEnv, tempWorkspace, uniqueQueue, type TestEnv } from '../support/temporal';

/**
 * The CLI on a real tree on the real server: a parent workflow (a stand-in for the task tool, see
 * tree-workflows.ts) starts two `agentWorkflow` children with the task tool's ids. Covered here:
 * reading a child's events for nested progress, the transcript with the children nested, and
 * `list --top-level`. Not covered: a parent that is itself an agent run (its task calls and
 * subagent events come with the workflow side).
 */

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => env?.close());

async function transcriptOf(id: string): Promise<{ json: Transcript; markdown: string }> {
  let json = '';
  let markdown = '';
  expect(await transcriptCommand(env.client, id, { json: true }, (c) => void (json += c))).toBe(0);
  expect(await transcriptCommand(env.client, id, { json: false }, (c) => void (markdown += c))).toBe(0);
  return { json: JSON.parse(json) as Transcript, markdown };
}

test('a tree of runs: children followed by their events, nested in the transcript, left out by list --top-level', async () => {
  const workspace = await tempWorkspace('tree');
  const parentId = `tree-${Date.now()}`;
  const taskQueue = uniqueQueue('tree');
  const model = new ScriptedModel([text('First child done.'), text('Second child done.')]);
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    deps: { models: () => model, tools: createDefaultRegistry(), defaultWorkspace: workspace },
    stickyActivities: false,
    workerOptions: { workflowsPath: require.resolve('./tree-workflows') },
  });
  const lines: string[] = [];
  await worker.runUntil(async () => {
    const parent = await env.client.workflow.start('treeParent', {
      taskQueue,
      workflowId: parentId,
      args: [[{ workspace }, { workspace }]],
    });
    expect(await parent.result()).toEqual(['First child done.', 'Second child done.']);
    // The parent's events as the task tool reports them; the child's own come from its real `events` query.
    const child = `${parentId}.task-1`;
    const progress = new SubagentProgress(
      (l) => lines.push(l),
      (id, after) => queryEvents(env.client.workflow.getHandle(id) as AgentHandle, after),
      parentId,
    );
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    const page: RunEvent[] = [
      { seq: 1, kind: 'subagent_started', toolUseId: 'toolu_1', workflowId: child, depth: 1 },
      {
        seq: 2,
        kind: 'subagent_finished',
        toolUseId: 'toolu_1',
        workflowId: child,
        exitReason: 'completed',
        usage,
        costUsd: 0,
      },
    ];
    await progress.page(page, () => undefined);
  });
  expect(lines[0]).toBe(`  │ ● subagent run ${parentId}.task-1 · model scripted-test`);
  expect(lines).toContain('  │ “First child done.”');

  const { json, markdown } = await transcriptOf(parentId);
  expect(json.subagents?.map((s) => [s.workflowId, s.toolUseId, s.note])).toEqual([
    [`${parentId}.task-1`, null, undefined],
    [`${parentId}.task-2`, null, undefined],
  ]);
  expect(json.subagents?.[1]?.transcript?.messages).toEqual([
    { role: 'user', content: 'child 2' },
    { role: 'assistant', content: [{ type: 'text', text: 'Second child done.' }] },
  ]);
  expect(markdown).toContain('## Subagents not matched to a task call');
  expect(markdown).toContain(`> ⤷ **Subagent** · general-purpose · run \`${parentId}.task-2\``);
  expect(markdown).toMatch(/^> Second child done\.$/m);
  // A child read on its own has no subagents.
  expect((await transcriptOf(`${parentId}.task-1`)).json.subagents).toBeUndefined();

  // Visibility is eventually consistent: wait until all three runs are listed, then filter.
  const ids = [parentId, `${parentId}.task-1`, `${parentId}.task-2`];
  const query = `WorkflowId IN (${ids.map((id) => `'${id}'`).join(', ')})`;
  let all: string[] = [];
  for (let i = 0; i < 50 && all.length < 3; i++) {
    all = (await listRuns(env.client, { query, limit: 10 })).runs.map((r) => r.workflowId);
    if (all.length < 3) await new Promise((r) => setTimeout(r, 200));
  }
  expect(all.sort()).toEqual([...ids].sort());
  const top = await listRuns(env.client, { query, limit: 10, topLevel: true });
  expect(top.query).toBe(`(${query}) AND ParentWorkflowId IS NULL`);
  expect(top.runs.map((r) => r.workflowId)).toEqual([parentId]);
});
