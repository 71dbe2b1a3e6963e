import { randomUUID } from 'node:crypto';
import { ScriptedModel, delayed, text, toolUse } from '../../src/models/scripted';
import type { AgentRunResult, EventsPage } from '../../src/shared';
import { statusJson } from '../cli/cli-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import {
  eventTypes,
  failedWorkflowTasks,
  query,
  rejection,
  temporal,
  temporalJson,
  waitForStatus,
  type HandlerDefinition,
  type WorkflowMetadata,
} from './temporal-cli-helpers';

/**
 * Runs driven entirely by the official `temporal` CLI, as an operator who never installed
 * durable-agent would: start with minimal input, every query, signal and update with good and bad
 * arguments, and `workflow metadata`. A worker with a scripted model runs the workflows. No
 * argument an outside client sends may fail a workflow task.
 */

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
const id = (label: string) => `tcli-${tag}-${label}`;

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('tcli');
});
afterAll(async () => {
  await env?.close();
});

function start(workflowId: string, taskQueue: string, input: Record<string, unknown>, ...extra: string[]) {
  return temporal([
    'workflow',
    'start',
    '--type',
    'agentWorkflow',
    '--task-queue',
    taskQueue,
    '-w',
    workflowId,
    '--input',
    JSON.stringify(input),
    ...extra,
  ]);
}

const result = (workflowId: string) =>
  temporalJson<{ status: string; closeEvent: { workflowExecutionCompletedEventAttributes?: { result: unknown[] } } }>([
    'workflow',
    'result',
    '-w',
    workflowId,
  ]);
const resultOf = async (workflowId: string) =>
  (await result(workflowId)).closeEvent.workflowExecutionCompletedEventAttributes?.result[0] as AgentRunResult;

async function expectNoFailedWorkflowTask(workflowId: string): Promise<void> {
  expect(await failedWorkflowTasks(workflowId)).toEqual([]);
}

test('start with minimal input {"prompt":"hi"} and a static summary; the run completes and prints its result', async () => {
  const workflowId = id('minimal');
  const model = new ScriptedModel([text('Hello there.')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const started = await start(workflowId, taskQueue, { prompt: 'hi' }, '--static-summary', 'Say hi');
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(new RegExp(`^\\s+WorkflowId\\s+${workflowId}$`, 'm'));
    expect(started.stdout).toMatch(/^\s+Type\s+agentWorkflow$/m);
    const done = await result(workflowId);
    expect(done.status).toBe('COMPLETED');
    expect(await resultOf(workflowId)).toMatchObject({
      exitReason: 'completed',
      finalText: 'Hello there.',
      iterations: 1,
    });
  });
  expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: 'hi' }]);
  const described = await temporal(['workflow', 'describe', '-w', workflowId]);
  expect(described.stdout).toMatch(/^\s+StaticSummary\s+"Say hi"$/m);
  expect(described.stdout).toMatch(/^\s+Status\s+COMPLETED$/m);
  expect(await statusJson(workflowId)).toMatchObject({ status: 'completed', source: 'result' });
});

test('queries state and events answer with and without input, and nonsense input falls back to defaults', async () => {
  const workflowId = id('queries');
  await withWorker(env, { model: new ScriptedModel([text('First answer.')]) }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi', session: true, workspace })).code).toBe(0);
    const state = await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');
    expect(state).toMatchObject({ status: 'awaiting_input', iteration: 1, session: true, model: 'claude-sonnet-5-5' });
    // The default (text) output prints the query result as JSON on one line.
    const printed = await temporal(['workflow', 'query', '-w', workflowId, '--name', 'state']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/^\s*QueryResult\s+\{.*"status":"awaiting_input".*\}$/m);

    // `events` with no argument is what the Web UI sends by default: the page from the beginning.
    const all = await query<EventsPage>(workflowId, 'events');
    expect(all.events[0]).toMatchObject({ seq: 1, kind: 'run_started', prompt: 'hi' });
    expect(all.events.map((e) => e.kind)).toEqual(expect.arrayContaining(['answer', 'awaiting_input']));
    expect(all.cursor).toBe(all.events.at(-1)?.seq);
    const later = await query<EventsPage>(workflowId, 'events', '{"after":2}');
    expect(later.events.map((e) => e.seq)).toEqual(all.events.filter((e) => e.seq > 2).map((e) => e.seq));
    // The CLI prints an empty array as null (it re-encodes the JSON through Go values).
    const none = await query<EventsPage>(workflowId, 'events', JSON.stringify({ after: all.cursor }));
    expect(none).toEqual({ events: null, cursor: all.cursor, truncated: false });
    for (const nonsense of ['null', '"yesterday"', '{"after":"2"}', '{"after":-5}', '[1,2]', '{}']) {
      const page = await query<EventsPage>(workflowId, 'events', nonsense);
      expect(page.events.map((e) => e.seq)).toEqual(all.events.map((e) => e.seq));
    }
    // `state` takes no argument and ignores one.
    expect(await query(workflowId, 'state', '{"anything":[1,2,3]}')).toMatchObject({ status: 'awaiting_input' });
    await expectNoFailedWorkflowTask(workflowId);
    await temporal(['workflow', 'terminate', '-w', workflowId, '--reason', 'test over']);
  });
});

test('interrupt with no input, with --input null and with a reason stops the run; input that makes no sense is ignored with a notice', async () => {
  const model = new ScriptedModel([text('One.'), text('Two.'), text('Three.')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const cases: Array<[string, string[], string | undefined]> = [
      ['signal-bare', [], undefined],
      ['signal-null', ['--input', 'null'], undefined],
      ['signal-reason', ['--input', '{"reason":"enough for today"}'], 'enough for today'],
    ];
    for (const [label, input, reason] of cases) {
      const workflowId = id(label);
      expect((await start(workflowId, taskQueue, { prompt: 'hi', session: true, workspace })).code).toBe(0);
      await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');
      if (label === 'signal-bare') {
        // A number is not a request to stop: ignored, said so in the events, the run goes on.
        const ignored = await temporal([
          'workflow',
          'signal',
          '-w',
          workflowId,
          '--name',
          'interrupt',
          '--input',
          '42',
        ]);
        expect(ignored.code).toBe(0);
        const page = await query<EventsPage>(workflowId, 'events');
        expect(page.events.at(-1)).toMatchObject({
          kind: 'notice',
          message: expect.stringMatching(/^interrupt ignored/),
        });
        expect(await query(workflowId, 'state')).toMatchObject({ status: 'awaiting_input' });
      }
      const signalled = await temporal(['workflow', 'signal', '-w', workflowId, '--name', 'interrupt', ...input]);
      expect(signalled).toMatchObject({ code: 0, stdout: expect.stringContaining('Signal workflow succeeded') });
      const ended = await resultOf(workflowId);
      expect(ended.exitReason).toBe('interrupted');
      if (reason) expect(ended.error?.message).toContain(reason);
      await expectNoFailedWorkflowTask(workflowId);
    }
  });
}, 60_000);

test('every update accepts good input and rejects bad input with a message saying what is accepted', async () => {
  const workflowId = id('updates');
  const model = new ScriptedModel([
    toolUse([
      { id: 'toolu_a', name: 'write_file', input: { path: 'a.txt', content: 'a' } },
      { id: 'toolu_b', name: 'write_file', input: { path: 'b.txt', content: 'b' } },
    ]),
    text('Wrote a.txt, b.txt was denied.'),
    delayed(3_000, text('Second answer.')),
  ]);
  const update = (name: string, ...input: string[]) =>
    temporal(['workflow', 'update', 'execute', '-w', workflowId, '--name', name, ...input]);
  const updateJson = async (name: string, input: string) =>
    (
      await temporalJson<{ result: unknown }>([
        'workflow',
        'update',
        'execute',
        '-w',
        workflowId,
        '--name',
        name,
        '--input',
        input,
      ])
    ).result;

  await withWorker(env, { model }, async (taskQueue) => {
    const input = { prompt: 'write two files', session: true, approveMutating: true, workspace };
    expect((await start(workflowId, taskQueue, input)).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'awaiting_approval');

    const refused: Array<[string, string[], RegExp]> = [
      [
        'approveTool',
        ['--input', '{"toolUseId":"toolu_nope"}'],
        /^no tool call 'toolu_nope' is waiting for approval; waiting: toolu_a, toolu_b$/,
      ],
      ['approveTool', ['--input', 'null'], /^expected an object .*toolUseId.*, got null$/],
      ['approveTool', [], /toolUseId/],
      ['denyTool', ['--input', '{"toolUseId":"toolu_b","reason":7}'], /^reason must be a string/],
      ['denyTool', ['--input', '{"toolUseId":"toolu_b","extra":true}'], /^unknown field\(s\) 'extra'; accepted: /],
      ['sendMessage', ['--input', '{"msg":"hello"}'], /^unknown field\(s\) 'msg'; accepted: \{"message": string\}$/],
      ['sendMessage', ['--input', '{"message":"   "}'], /^message must be a non-empty string/],
      ['endSession', [], /working on|not waiting|waits for input/],
    ];
    for (const [name, args, message] of refused) {
      const out = await update(name, ...args);
      expect(out.code).toBe(1);
      expect(rejection(out)).toMatch(message);
    }

    expect(await updateJson('approveTool', '{"toolUseId":"toolu_a"}')).toEqual({
      toolUseId: 'toolu_a',
      name: 'write_file',
      approved: true,
    });
    const denied = await update('denyTool', '--input', '{"toolUseId":"toolu_b","reason":"not that one"}');
    expect(denied.code).toBe(0);
    expect(denied.stdout).toMatch(/^\s+Name\s+denyTool$/m);
    expect(denied.stdout).toMatch(/^\s+Result\s+map\[approved:false name:write_file toolUseId:toolu_b\]$/m);
    await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');

    expect(await updateJson('sendMessage', '{"message":"and now?"}')).toEqual({ pendingMessages: 1, iteration: 2 });
    // While the session works on the message it is not waiting: ending it is refused, not queued.
    const early = await update('endSession', '--input', '{}');
    expect(early.code).toBe(1);
    expect(rejection(early)).toMatch(/working on|not waiting|waits for input/);
    await waitForStatus(workflowId, (s) => s.status === 'awaiting_input' && s.iteration === 3);

    const wrongEnd = await update('endSession', '--input', '{"now":true}');
    expect(rejection(wrongEnd)).toMatch(/^expected \{\} or no argument/);
    expect(await updateJson('endSession', '{}')).toEqual({ status: 'completed' });
    expect(await resultOf(workflowId)).toMatchObject({
      exitReason: 'completed',
      finalText: 'Second answer.',
      iterations: 3,
    });
    await expectNoFailedWorkflowTask(workflowId);
  });
  // A rejected update leaves no trace in history; an accepted one is recorded.
  const types = await eventTypes(workflowId);
  expect(types.filter((t) => t === 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED')).toHaveLength(4);
  expect(types).not.toContain('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED');

  const after = await update('sendMessage', '--input', '{"message":"too late"}');
  expect(after.code).toBe(1);
}, 60_000);

test('endSession on a run that is not a session is refused', async () => {
  const workflowId = id('not-session');
  await withWorker(env, { model: new ScriptedModel([delayed(60_000, text('never'))]) }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi', workspace })).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'running');
    const out = await temporal(['workflow', 'update', 'execute', '-w', workflowId, '--name', 'endSession']);
    expect(out.code).toBe(1);
    expect(rejection(out)).toMatch(/not a session/);
    await temporal(['workflow', 'terminate', '-w', workflowId, '--reason', 'test over']);
  });
});

test('workflow metadata lists every handler with a description, and the current details', async () => {
  const workflowId = id('metadata');
  await withWorker(env, { model: new ScriptedModel([text('Answer.')]) }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi', session: true, workspace })).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');
    const metadata = (
      await temporalJson<{ queryResult: WorkflowMetadata[] }>(['workflow', 'metadata', '-w', workflowId])
    ).queryResult[0] as WorkflowMetadata;
    const described = (list: HandlerDefinition[]) =>
      Object.fromEntries(list.filter((d) => !d.name.startsWith('__')).map((d) => [d.name, d.description ?? '']));
    const queries = described(metadata.definition.queryDefinitions);
    const signals = described(metadata.definition.signalDefinitions);
    const updates = described(metadata.definition.updateDefinitions);
    expect(Object.keys(queries).sort()).toEqual(['events', 'state']);
    expect(Object.keys(signals)).toEqual(['interrupt']);
    expect(Object.keys(updates).sort()).toEqual(['approveTool', 'denyTool', 'endSession', 'sendMessage']);
    const all = { ...queries, ...signals, ...updates };
    for (const [name, description] of Object.entries(all)) {
      expect([name, description.length > 20]).toEqual([name, true]);
    }
    expect(metadata.currentDetails).toContain('awaiting_input');

    // The table the CLI prints by default shows each handler beside its description.
    const table = await temporal(['workflow', 'metadata', '-w', workflowId]);
    for (const [name, description] of Object.entries(all)) {
      const firstWords = description.split(' ').slice(0, 3).join(' ');
      expect(table.stdout).toMatch(
        new RegExp(`^\\s+${name}\\s+${firstWords.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'),
      );
    }
    await temporal(['workflow', 'terminate', '-w', workflowId, '--reason', 'test over']);
  });
});
