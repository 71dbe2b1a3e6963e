import type { WorkflowHandle } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, delayed, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared';
import {
  SEARCH_ATTRIBUTE_MIN_INTERVAL_MS,
  WORKFLOW_TYPE,
  iterationsSearchAttribute,
  statusSearchAttribute,
} from '../../src/shared';
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

test('a fast loop rewrites its search attributes at most once a second per status, and ends with the final figures', async () => {
  const iterations = 20;
  const model = new ScriptedModel([...new Array<ScriptStep>(iterations).fill(readNotes), text('Summary.')]);
  const { handle, elapsedMs } = await withWorker(suite.env, { model }, async (tq) => {
    const began = Date.now();
    const handle = await start(tq, { maxIterations: iterations });
    await handle.result();
    return { handle, elapsedMs: Date.now() - began };
  });
  const written = await upserts(handle);
  const last = written[written.length - 1];
  expect(last).toMatchObject({ status: 'max_iterations', iterations });
  // Within one status, two writes are at least the interval apart in workflow time.
  for (let i = 1; i < written.length; i++) {
    const [a, b] = [written[i - 1] as Upsert, written[i] as Upsert];
    if (a.status === b.status)
      expect(b.workflowTimeMs - a.workflowTimeMs).toBeGreaterThanOrEqual(SEARCH_ATTRIBUTE_MIN_INTERVAL_MS);
  }
  // One write at the start, one at the end, and one per elapsed interval at most in between.
  expect(written.length).toBeLessThanOrEqual(2 + Math.ceil(elapsedMs / SEARCH_ATTRIBUTE_MIN_INTERVAL_MS));
  expect(written.length).toBeLessThan(iterations);
});

test('when iterations take longer than the interval, every iteration is written as it ends', async () => {
  const slow = SEARCH_ATTRIBUTE_MIN_INTERVAL_MS + 200;
  const model = new ScriptedModel([delayed(slow, readNotes), delayed(slow, readNotes), text('Summary.')]);
  const handle = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { maxIterations: 2 });
    await handle.result();
    return handle;
  });
  const written = await upserts(handle);
  expect(written.map((u) => [u.status, u.iterations])).toEqual([
    ['running', 0],
    ['running', 1],
    ['running', 2],
    ['max_iterations', 2],
  ]);
});
