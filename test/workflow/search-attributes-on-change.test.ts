import type { WorkflowHandle } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { approveTool, queryState, startRun } from '../../src/client';
import { ScriptedModel, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared';
import {
  costSearchAttribute,
  indexStep,
  iterationsSearchAttribute,
  modelSearchAttribute,
  statusSearchAttribute,
} from '../../src/shared';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

let env: TestEnv;
let workspace: string;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  workspace = await tempWorkspace('attrs-change');
  await fs.writeFile(path.join(workspace, 'notes.txt'), 'one line of notes\n');
});

let counter = 0;
/** As the CLI starts runs: the client helper, which sets the search attributes at start. */
function start(taskQueue: string, input: Partial<AgentRunInput>) {
  return startRun(
    env.client,
    { prompt: 'read the notes', model: 'claude-sonnet-5-5', workspace, ...input },
    { workflowId: `attrs-change-${Date.now()}-${++counter}`, taskQueue },
  );
}

/** The run's own upserts (not patched()'s TemporalChangeVersion writes): the fields each one wrote. */
async function upserts(handle: WorkflowHandle): Promise<Array<Record<string, unknown>>> {
  const history = await handle.fetchHistory();
  const found: Array<Record<string, unknown>> = [];
  for (const event of history.events ?? []) {
    const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    if (!fields || fields.TemporalChangeVersion) continue;
    found.push(
      Object.fromEntries(
        Object.entries(fields).map(([name, p]) => [
          name,
          p.data?.length ? JSON.parse(Buffer.from(p.data).toString('utf8')) : null,
        ]),
      ),
    );
  }
  return found;
}

async function indexed(handle: WorkflowHandle) {
  const sa = (await handle.describe()).typedSearchAttributes;
  return {
    status: sa.get(statusSearchAttribute),
    iterations: sa.get(iterationsSearchAttribute),
    model: sa.get(modelSearchAttribute),
    cost: sa.get(costSearchAttribute),
  };
}

const usage = { inputTokens: 1_000, outputTokens: 40 };
const readNotes: ScriptStep = toolUse([{ name: 'read_file', input: { path: 'notes.txt' } }], { usage });

test('a run started by the client is indexed at start and upserts only at iteration steps and at its end', async () => {
  const iterations = 20;
  const model = new ScriptedModel([...new Array<ScriptStep>(iterations).fill(readNotes), text('Summary.', { usage })]);
  const handle = await withWorker(env, { model }, async (tq) => {
    const handle = await start(tq, { maxIterations: iterations });
    await handle.result();
    return handle;
  });
  const written = await upserts(handle);
  // No write at start (the client set `running`, iteration 0, the model); the steps 10 and 20; the end.
  expect(written.map((w) => [w.DurableAgentStatus, w.DurableAgentIterations])).toEqual([
    [undefined, 10],
    [undefined, 20],
    ['max_iterations', undefined],
  ]);
  const result = await handle.result();
  expect(await indexed(handle)).toEqual({
    status: 'max_iterations',
    iterations,
    model: 'claude-sonnet-5-5',
    cost: result.costUsd,
  });
});

test('a status change is written at once with the exact iterations and cost, and the end too', async () => {
  const model = new ScriptedModel([
    readNotes,
    toolUse([{ name: 'write_file', input: { path: 'out.txt', content: 'x' } }], { usage }),
    text('Done.', { usage }),
  ]);
  const handle = await withWorker(env, { model }, async (tq) => {
    const handle = await start(tq, { approveMutating: true });
    let pending: { toolUseId: string } | undefined;
    for (let i = 0; i < 200 && !pending; i++) {
      pending = (await queryState(handle)).pendingApprovals?.[0];
      if (!pending) await new Promise((r) => setTimeout(r, 50));
    }
    expect(pending).toBeDefined();
    // Visibility is updated asynchronously: wait for the awaiting_approval write to show.
    let seen = await indexed(handle);
    for (let i = 0; i < 100 && seen.status !== 'awaiting_approval'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await indexed(handle);
    }
    expect(seen.status).toBe('awaiting_approval');
    expect(seen.iterations).toBe(2);
    await approveTool(handle, pending!.toolUseId);
    await handle.result();
    return handle;
  });
  const result = await handle.result();
  expect(result.exitReason).toBe('completed');
  const written = await upserts(handle);
  expect(written.map((w) => w.DurableAgentStatus)).toEqual(['awaiting_approval', 'running', 'completed']);
  // Each status change carries the exact figures of that moment.
  expect(written[0]).toMatchObject({ DurableAgentIterations: 2 });
  expect(written[2]).toMatchObject({ DurableAgentIterations: 3, DurableAgentCostUsd: result.costUsd });
});

test('iterations and cost are refreshed on the 1-2-5 steps from 10 iterations and 0.10 USD', () => {
  expect([0, 9, 10, 19, 20, 49, 50, 99, 100, 250].map((n) => indexStep(n, 10))).toEqual([
    0, 0, 10, 10, 20, 20, 50, 50, 100, 200,
  ]);
  expect([null, 0.05, 0.1, 0.3, 0.3 / 0.1 / 10, 0.5, 1.99, 2, 7.5, 12].map((c) => indexStep(c, 0.1))).toEqual([
    0, 0, 0.1, 0.2, 0.2, 0.5, 1, 2, 5, 10,
  ]);
});
