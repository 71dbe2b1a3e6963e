import type { WorkflowHandle } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, delayed, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared';
import { WORKFLOW_TYPE, iterationsSearchAttribute, statusSearchAttribute } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite } = useWorkflowSuite('attrs');
beforeEach(async () => {
  await fs.writeFile(path.join(suite.workspace, 'notes.txt'), 'one line of notes\n');
});

let counter = 0;
function start(taskQueue: string, input: Partial<AgentRunInput>) {
  return suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `attrs-${Date.now()}-${++counter}`,
    args: [{ prompt: 'read the notes', model: 'scripted-test', workspace: suite.workspace, ...input }],
  });
}

interface Upsert {
  /** Workflow time of the task that wrote it: its WorkflowTaskStarted event. */
  workflowTimeMs: number;
  status?: string;
  iterations?: number;
}

/** Every upsert of the run's own search attributes in its history, in order. */
async function upserts(handle: WorkflowHandle): Promise<Upsert[]> {
  const history = await handle.fetchHistory();
  const found: Upsert[] = [];
  let taskStartedMs = 0;
  for (const event of history.events ?? []) {
    const at = Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
    if (event.workflowTaskStartedEventAttributes) taskStartedMs = at;
    const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    if (!fields) continue;
    const value = (name: string): unknown => {
      const data = fields[name]?.data;
      return data?.length ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined;
    };
    const status = value(statusSearchAttribute.name);
    const iterations = value(iterationsSearchAttribute.name);
    // patched() writes TemporalChangeVersion on its own: not one of the run's writes.
    if (status === undefined && iterations === undefined) continue;
    found.push({
      workflowTimeMs: taskStartedMs,
      ...(typeof status === 'string' ? { status } : {}),
      ...(typeof iterations === 'number' ? { iterations } : {}),
    });
  }
  return found;
}

const readNotes: ScriptStep = toolUse([{ name: 'read_file', input: { path: 'notes.txt' } }]);

/** The run's search attributes as the server holds them now (what a visibility filter sees). */
async function indexed(handle: WorkflowHandle): Promise<{ status?: string; iterations?: number }> {
  const sa = (await handle.describe()).typedSearchAttributes;
  return { status: sa.get(statusSearchAttribute), iterations: sa.get(iterationsSearchAttribute) };
}

test('a run started without its search attributes (as other clients start it) writes them all at its first index, then only on change', async () => {
  const iterations = 20;
  const model = new ScriptedModel([...new Array<ScriptStep>(iterations).fill(readNotes), text('Summary.')]);
  const handle = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { maxIterations: iterations });
    await handle.result();
    return handle;
  });
  const written = await upserts(handle);
  expect(written[0]).toEqual(expect.objectContaining({ status: 'running', iterations: 0 }));
  // The 1-2-5 steps (10, 20) and the end, not every iteration or every second.
  expect(written.map((u) => [u.status, u.iterations])).toEqual([
    ['running', 0],
    [undefined, 10],
    [undefined, 20],
    ['max_iterations', undefined],
  ]);
  expect(await indexed(handle)).toEqual({ status: 'max_iterations', iterations });
});

test('iterations between steps are not written, however long they take; the end writes the exact figure', async () => {
  const slow = 300;
  const model = new ScriptedModel([delayed(slow, readNotes), delayed(slow, readNotes), text('Summary.')]);
  const handle = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { maxIterations: 2 });
    await handle.result();
    return handle;
  });
  const written = await upserts(handle);
  expect(written.map((u) => [u.status, u.iterations])).toEqual([
    ['running', 0],
    ['max_iterations', 2],
  ]);
  expect(await indexed(handle)).toEqual({ status: 'max_iterations', iterations: 2 });
});
