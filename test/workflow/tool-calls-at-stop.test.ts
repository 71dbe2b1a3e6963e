import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { AnthropicProvider } from '../../src/models/anthropic';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery } from '../../src/shared';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * A turn with tool calls whose stop reason is `stop_sequence` or null was read as the final answer
 * and its tool calls dropped (and, in a session, left without results, which the API rejects on
 * the next call). They now run like any others.
 */
jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('quiet-stop');

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake?.close();
});

test('tool calls with stop reason stop_sequence (Anthropic fake) run and the run goes on', async () => {
  const stopReason = 'stop_sequence';
  fake.enqueue(
    message(
      [
        { type: 'text', text: 'Writing it.' },
        { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: { path: 'a.txt', content: 'hello' } },
      ],
      { stop_reason: stopReason },
    ),
    message('Written.'),
  );
  const provider = new AnthropicProvider({ baseURL: fake.url, apiKey: 'sk-test' });
  const { result, events } = await withWorker(suite.env, { model: provider }, async (tq) => {
    const handle = await start(tq, { model: 'claude-sonnet-5-5' });
    return { result: await runResult(handle), events: (await handle.query(eventsQuery, { after: 0 })).events };
  });
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Written.' });
  expect(await fs.readFile(path.join(suite.workspace, 'a.txt'), 'utf8')).toBe('hello');
  const results = JSON.stringify(fake.requests[1]!.body.messages.at(-1).content);
  expect(results).toContain('"tool_use_id":"toolu_1"');
  expect(events).toContainEqual(
    expect.objectContaining({ kind: 'notice', message: expect.stringContaining('with tool calls; running them') }),
  );
});

test('tool calls with no stop reason (null, as some OpenAI-compatible servers answer) run too', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'write_file', input: { path: 'b.txt', content: 'hi' } }], { stopReason: null }),
    text('Written.'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => runResult(await start(tq)));
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Written.' });
  expect(await fs.readFile(path.join(suite.workspace, 'b.txt'), 'utf8')).toBe('hi');
  const last = model.requests[1]!.messages.at(-1)!;
  expect(JSON.stringify(last.content)).toContain('"type":"tool_result"');
});
