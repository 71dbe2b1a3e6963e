import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { delayed, fail, ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { ModelCallContext } from '../../src/models/types';
import type { ModelRequest } from '../../src/shared';
import { ErrorTypes } from '../../src/shared';

function request(prompt = 'hi'): ModelRequest {
  return { model: 'scripted-test', messages: [{ role: 'user', content: prompt }], tools: [], maxTokens: 100 };
}

function ctx(signal: AbortSignal = new AbortController().signal): ModelCallContext {
  return { signal, heartbeat: () => undefined };
}

test('plays canned responses in order, with defaults filled in', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'glob', input: { pattern: '*.ts' } }], { text: 'Looking.' }),
    text('Done.', { usage: { inputTokens: 12, outputTokens: 3 } }),
  ]);
  const first = await model.call(request(), ctx());
  expect(first).toEqual({
    id: 'msg_scripted_01',
    model: 'scripted-test',
    content: [
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 'toolu_01', name: 'glob', input: { pattern: '*.ts' } },
    ],
    stopReason: 'tool_use',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
  });
  const second = await model.call(request(), ctx());
  expect(second.content).toEqual([{ type: 'text', text: 'Done.' }]);
  expect(second.stopReason).toBe('end_turn');
  expect(second.usage).toEqual({
    inputTokens: 12,
    outputTokens: 3,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  });
  expect(model.remaining).toBe(0);
});

test('generated tool_use ids are unique per model and explicit ids are kept', async () => {
  const step = toolUse([
    { name: 'bash', input: { command: 'ls' } },
    { name: 'glob', input: { pattern: '*' }, id: 'toolu_custom' },
  ]);
  const model = new ScriptedModel([step, step]);
  const a = await model.call(request(), ctx());
  const b = await model.call(request(), ctx());
  expect(a.content.map((c) => (c as { id?: string }).id)).toEqual(['toolu_01', 'toolu_custom']);
  expect(b.content.map((c) => (c as { id?: string }).id)).toEqual(['toolu_02', 'toolu_custom']);
});

test('records every request as a deep copy', async () => {
  const model = new ScriptedModel([text('a'), text('b')]);
  const req = request('first');
  await model.call(req, ctx());
  (req.messages[0] as { content: string }).content = 'mutated afterwards';
  await model.call(request('second'), ctx());
  expect(model.requests.map((r) => r.messages[0]!.content)).toEqual(['first', 'second']);
});

test('a function step sees the request and may be async', async () => {
  const model = new ScriptedModel([
    async (req) => {
      await new Promise((r) => setTimeout(r, 10));
      return text(`you said: ${String(req.messages[0]!.content)}`);
    },
  ]);
  const response = await model.call(request('hello'), ctx());
  expect(response.content).toEqual([{ type: 'text', text: 'you said: hello' }]);
});

test('an error step throws that error as-is', async () => {
  const failure = ApplicationFailure.create({
    type: ErrorTypes.Overloaded,
    message: 'overloaded',
    nonRetryable: false,
  });
  const model = new ScriptedModel([fail(failure), new Error('plain error')]);
  await expect(model.call(request(), ctx())).rejects.toBe(failure);
  await expect(model.call(request(), ctx())).rejects.toThrow('plain error');
});

test('running out of script throws a non-retryable ScriptExhausted failure, and still records the request', async () => {
  const model = new ScriptedModel([text('only one')]);
  await model.call(request(), ctx());
  const error = await model.call(request('one too many'), ctx()).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect(error).toMatchObject({ type: ErrorTypes.ScriptExhausted, nonRetryable: true });
  expect((error as Error).message).toContain('call 2 but only 1 step(s) scripted');
  expect(model.requests).toHaveLength(2);
});

test('a delayed step waits, then answers', async () => {
  const model = new ScriptedModel([delayed(100, text('slow'))]);
  const started = Date.now();
  const response = await model.call(request(), ctx());
  expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  expect(response.content).toEqual([{ type: 'text', text: 'slow' }]);
});

test('aborting during a delay rejects promptly with the signal’s cancellation', async () => {
  const model = new ScriptedModel([delayed(30_000, text('never'))]);
  const controller = new AbortController();
  const reason = new CancelledFailure('CANCELLED');
  setTimeout(() => controller.abort(reason), 50);
  const started = Date.now();
  await expect(model.call(request(), ctx(controller.signal))).rejects.toBe(reason);
  // Far below the 30 s delay; loose enough for a loaded CI machine.
  expect(Date.now() - started).toBeLessThan(10_000);
});

test('push appends steps to a running script', async () => {
  const model = new ScriptedModel([]);
  model.push(text('late'));
  await expect(model.call(request(), ctx())).resolves.toMatchObject({ content: [{ type: 'text', text: 'late' }] });
});

test('responses are plain JSON', async () => {
  const model = new ScriptedModel([toolUse([{ name: 'x', input: { a: [1, { b: null }] } }])]);
  const response = await model.call(request(), ctx());
  expect(JSON.parse(JSON.stringify(response))).toEqual(response);
});
