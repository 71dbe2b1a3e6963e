import { bundleWorkflowCode } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { TELEMETRY_WORKFLOW_MODULE } from '../../src/telemetry';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { tempWorkspace, uniqueQueue } from '../support/temporal';
import { useTraceSuite } from './trace-suite';

/**
 * A subagent runs as a child `agentWorkflow` started as the `task` tool starts it (id
 * `<parent>.task-<n>`): its `invoke_agent` span hangs under an `execute_tool task` span of the
 * parent, through the child's start headers, in the parent's trace. A tiny parent workflow stands
 * in for the task tool; the real worker, tracing interceptors and OTLP receiver.
 */
jest.setTimeout(120_000);
const t = useTraceSuite();

let bundle: string;
beforeAll(async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./fixtures/task-parent'),
    workflowInterceptorModules: [TELEMETRY_WORKFLOW_MODULE],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  bundle = path.join(await tempWorkspace('otel-task-bundle'), 'bundle.js');
  await fs.writeFile(bundle, code);
}, 180_000);

async function runParent(id: string, childSuffix: string) {
  const telemetry = t.telemetryFor();
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_child', name: 'glob', input: { pattern: '*' } }]),
    text('Child done.'),
  ]);
  const taskQueue = uniqueQueue('otel-task');
  const worker = await createAgentWorker({
    connection: t.env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: bundle,
    deps: { models: () => model, tools: createDefaultRegistry() },
    stickyActivities: false,
    telemetry,
    shutdownGraceTime: 200,
  });
  const finalText = await worker.runUntil(
    t.env.client.workflow.execute('taskParent', {
      taskQueue,
      workflowId: id,
      args: [{ prompt: 'look around', model: 'scripted-test', workspace: t.workspace }, childSuffix],
    }),
  );
  expect(finalText).toBe('Child done.');
  for (let i = 0; i < 100 && !t.receiver.spans.some((s) => s.name === 'RunWorkflow:taskParent'); i++) {
    await telemetry.forceFlush();
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("the subagent's invoke_agent span nests under the parent's execute_tool task span, in one trace", async () => {
  const id = `otel-task-${Date.now()}`;
  await runParent(id, '.task-1');
  const task = t.one('execute_tool task');
  expect(task.attributes).toMatchObject({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'task',
    'gen_ai.conversation.id': id,
    'durable_agent.subagent.workflow_id': `${id}.task-1`,
  });
  const child = agentSpanOf(`${id}.task-1`);
  // (Every workflow of the bundle is wrapped in invoke_agent, this stand-in parent too.)
  expect(t.ancestry(child)).toEqual([
    'RunWorkflow:agentWorkflow',
    'StartChildWorkflow:agentWorkflow',
    'execute_tool task',
    'invoke_agent durable-agent',
    'RunWorkflow:taskParent',
  ]);
  expect(t.ancestry(task)[0]).toBe('invoke_agent durable-agent');
  // The child's own tool call is under the child's agent span.
  const glob = t.one('execute_tool glob');
  expect(glob.traceId).toBe(child.traceId);
  expect(t.ancestry(glob)).toEqual(expect.arrayContaining(['invoke_agent durable-agent', 'execute_tool task']));
  expect(new Set(t.receiver.spans.map((s) => s.traceId)).size).toBe(1);
});

test('a child workflow under another id gets no task span', async () => {
  const id = `otel-child-${Date.now()}`;
  await runParent(id, '-helper');
  expect(t.named('execute_tool task')).toEqual([]);
  expect(t.ancestry(agentSpanOf(`${id}-helper`))).toContain('StartChildWorkflow:agentWorkflow');
});

function agentSpanOf(workflowId: string) {
  const found = t.named('invoke_agent ').filter((span) => span.attributes['gen_ai.conversation.id'] === workflowId);
  expect(found).toHaveLength(1);
  return found[0]!;
}
