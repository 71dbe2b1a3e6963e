import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import {
  DONE_TOOL_NAME,
  EVENT_CARRIED_OUTPUT_CHARS,
  EVENT_TOOL_OUTPUT_CHARS,
  eventsQuery,
  type AgentRunInput,
  type RunEvent,
} from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * What a run's `events` tell a program about each step: under the text protocol the model's words
 * (`text`) apart from its call (`tool_call_started`), the `done` call like any tool call, and a
 * tool's output long enough to be useful, cut and marked beyond EVENT_TOOL_OUTPUT_CHARS. The real
 * workflow and worker, real tools on a temp workspace, a scripted model.
 */
const { suite, start } = useWorkflowSuite('narration');

const xmlCall = (name: string, params: unknown) =>
  `<tool_code>\n<name>${name}</name>\n<parameters>${JSON.stringify(params)}</parameters>\n</tool_code>`;

async function runEvents(model: ScriptedModel, input: Partial<AgentRunInput>) {
  return withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, input);
    const result = await runResult(handle);
    const events: RunEvent[] = [];
    for (let after = 0; ;) {
      const page = await handle.query(eventsQuery, { after });
      if (page.events.length === 0) break;
      events.push(...page.events);
      after = page.cursor;
    }
    return { result, events };
  });
}

const narrative = (events: RunEvent[]) =>
  events.flatMap((e) => {
    switch (e.kind) {
      case 'text':
      case 'answer':
        return [`${e.kind}:${e.text}`];
      case 'tool_call_started':
        return [`${e.kind}:${e.name}:${JSON.stringify(e.input)}`];
      case 'tool_call_finished':
        return [`${e.kind}:${e.name}:${e.isError ? 'error' : 'ok'}`];
      default:
        return [];
    }
  });

test('text protocol: the thought is a text event, the call a tool call, and no event shows the XML', async () => {
  await fs.writeFile(path.join(suite.workspace, 'notes.txt'), 'hello from notes\n');
  const model = new ScriptedModel([
    text(`Let me read the notes first.\n\`\`\`xml\n${xmlCall('read_file', { path: 'notes.txt' })}\n\`\`\``),
    text(`${xmlCall('read_file', { path: 'notes.txt' })}\n<observation>invented</observation>`),
    text('<tool_code><name>read_file</name><parameters>{"path": notes}</parameters></tool_code>'),
    text('<final_answer>The notes say hello.</final_answer>'),
  ]);
  const { result, events } = await runEvents(model, { toolProtocol: 'xml' });
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The notes say hello.' });
  expect(narrative(events)).toEqual([
    'text:Let me read the notes first.',
    'tool_call_started:read_file:{"path":"notes.txt"}',
    'tool_call_finished:read_file:ok',
    'tool_call_started:read_file:{"path":"notes.txt"}',
    'tool_call_finished:read_file:ok',
    'answer:The notes say hello.',
  ]);
  const finished = events.filter((e) => e.kind === 'model_call_finished');
  expect(finished.map((e) => e.kind === 'model_call_finished' && e.text)).toEqual([
    'Let me read the notes first.',
    '',
    '',
    'The notes say hello.',
  ]);
  for (const e of events) expect(JSON.stringify(e)).not.toMatch(/<\/?(tool_code|final_answer|observation)/);
  expect(events.some((e) => e.kind === 'notice' && e.message.includes('cannot run'))).toBe(true);
});

test('the done call is narrated with its summary, native and text protocol alike', async () => {
  const native = await runEvents(
    new ScriptedModel([
      toolUse([{ id: 'd1', name: DONE_TOOL_NAME, input: {} }]),
      toolUse([{ id: 'd2', name: DONE_TOOL_NAME, input: { summary: 'Fixed the test.' } }]),
    ]),
    { requireDoneTool: true },
  );
  expect(native.result).toMatchObject({ exitReason: 'completed', finalText: 'Fixed the test.' });
  expect(narrative(native.events)).toEqual([
    'tool_call_started:done:{}',
    'tool_call_finished:done:error',
    'tool_call_started:done:{"summary":"Fixed the test."}',
    'tool_call_finished:done:ok',
    'answer:Fixed the test.',
  ]);
  const xml = await runEvents(
    new ScriptedModel([
      text('Finished answer without done.'),
      text(`All checked.\n${xmlCall(DONE_TOOL_NAME, { summary: 'Checked it.' })}`),
    ]),
    { requireDoneTool: true, toolProtocol: 'xml' },
  );
  expect(xml.result).toMatchObject({ exitReason: 'completed', finalText: 'Checked it.' });
  expect(narrative(xml.events)).toEqual([
    'text:Finished answer without done.',
    'text:All checked.',
    'tool_call_started:done:{"summary":"Checked it."}',
    'tool_call_finished:done:ok',
    'answer:Checked it.',
  ]);
});

test('a tool output is kept up to EVENT_TOOL_OUTPUT_CHARS in its event, marked when cut; the model gets it whole', async () => {
  const lines = Array.from({ length: 400 }, (_, i) => `line ${String(i).padStart(4, '0')}`).join('\n');
  await fs.writeFile(path.join(suite.workspace, 'long.txt'), `${lines}\n`);
  await fs.writeFile(path.join(suite.workspace, 'short.txt'), 'short\n');
  const model = new ScriptedModel([
    toolUse([
      { id: 'long', name: 'read_file', input: { path: 'long.txt' } },
      { id: 'short', name: 'read_file', input: { path: 'short.txt' } },
    ]),
    text('Read both.'),
  ]);
  const { events } = await runEvents(model, {});
  const finished = (id: string) =>
    events.find(
      (e): e is Extract<RunEvent, { kind: 'tool_call_finished' }> =>
        e.kind === 'tool_call_finished' && e.toolUseId === id,
    )!;
  const long = finished('long');
  expect(long.preview.length).toBe(EVENT_TOOL_OUTPUT_CHARS);
  expect(long.truncated).toBe(true);
  expect(long.preview).toContain('line 0000');
  expect(long.preview).toContain('line 0100');
  expect(finished('short').truncated).toBeUndefined();
  expect(finished('short').preview).toContain('short');
  // The model's next request carries the whole file: the event is only a view of it.
  expect(JSON.stringify(model.requests[1]!.messages)).toContain('line 0399');
});

test('events carried across continue-as-new keep the first EVENT_CARRIED_OUTPUT_CHARS of an output', async () => {
  await fs.writeFile(path.join(suite.workspace, 'big.txt'), `${'b'.repeat(5_000)}\n`);
  const steps = Array.from({ length: 10 }, () => toolUse([{ name: 'read_file', input: { path: 'big.txt' } }]));
  const model = new ScriptedModel([...steps, text('Done reading.')]);
  const { result, events } = await runEvents(model, { continueAsNewAfter: { events: 50 } });
  expect(result.exitReason).toBe('completed');
  const handOvers = events.flatMap((e, i) =>
    e.kind === 'notice' && e.message.startsWith('continued as new') ? [i] : [],
  );
  const lastHandOver = handOvers.at(-1) ?? -1;
  expect(lastHandOver).toBeGreaterThan(0);
  const sizes = (from: number, to: number) =>
    events.slice(from, to).flatMap((e) => (e.kind === 'tool_call_finished' ? [[e.preview.length, e.truncated]] : []));
  // Carried from earlier executions: cut to the smaller bound; this execution's own: the larger one.
  const carried = sizes(0, lastHandOver);
  expect(carried.length).toBeGreaterThan(0);
  expect(carried).toEqual(carried.map(() => [EVENT_CARRIED_OUTPUT_CHARS, true]));
  const own = sizes(lastHandOver, events.length);
  expect(own).toEqual(own.map(() => [EVENT_TOOL_OUTPUT_CHARS, true]));
});
