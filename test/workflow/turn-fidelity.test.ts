import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { ModelResponse, StopReason } from '../../src/shared';
import { DONE_TOOL_NAME, ErrorTypes, eventsQuery } from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * How one model turn becomes the run's next step, as the loop reads a turn: answers continued
 * after max_tokens, text blocks, the done tool, unknown stop reasons, and provider numbers.
 */
const { suite, start } = useWorkflowSuite('turn');

const exists = (file: string) =>
  fs.stat(path.join(suite.workspace, file)).then(
    () => true,
    () => false,
  );

test('an answer cut at max_tokens and continued is whole in finalText', async () => {
  const model = new ScriptedModel([
    text('The three steps are: first, ', { stopReason: 'max_tokens' }),
    text('second, ', { stopReason: 'max_tokens' }),
    text('and third.'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result).toMatchObject({
    exitReason: 'completed',
    finalText: 'The three steps are: first, second, and third.',
    iterations: 3,
  });
});

test('text blocks join with a newline and the answer is trimmed', async () => {
  const model = new ScriptedModel([
    {
      content: [
        { type: 'text', text: '  First paragraph.' },
        { type: 'text', text: 'Second paragraph.\n\n' },
      ],
      stopReason: 'end_turn',
    },
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result.finalText).toBe('First paragraph.\nSecond paragraph.');
});

test('in done-tool mode the calls after done in the same turn are not run, and the model is told why', async () => {
  const model = new ScriptedModel([
    toolUse([
      { id: 'before', name: 'write_file', input: { path: 'before.txt', content: 'x' } },
      { id: 'finish', name: DONE_TOOL_NAME, input: { summary: 'All done.' } },
      { id: 'after', name: 'write_file', input: { path: 'after.txt', content: 'y' } },
    ]),
  ]);
  const { result, events } = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { requireDoneTool: true });
    return { result: await handle.result(), events: (await handle.query(eventsQuery, {})).events };
  });
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'All done.' });
  expect(await exists('before.txt')).toBe(true);
  expect(await exists('after.txt')).toBe(false);
  const after = events.find((e) => e.kind === 'tool_call_finished' && e.toolUseId === 'after');
  expect(after).toMatchObject({ isError: true });
  expect(after?.kind === 'tool_call_finished' && after.preview).toContain("the run finished with your 'done' call");
});

test('a turn with an unknown stop reason runs its tool calls instead of dropping them', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'write_file', input: { path: 'kept.txt', content: 'z' } }], {
      stopReason: 'some_future_reason' as StopReason,
    }),
    text('Finished.'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Finished.', iterations: 2 });
  expect(await exists('kept.txt')).toBe(true);
  const results = model.requests[1]?.messages[2];
  expect(JSON.stringify(results)).toContain('tool_result');
});

test('a tool_use stop with no tool blocks ends the turn as the answer', async () => {
  const model = new ScriptedModel([text('Nothing to run.', { stopReason: 'tool_use' })]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Nothing to run.', iterations: 1 });
});

describe('provider numbers are validated, so the budget is never silently disabled', () => {
  const withUsage = (usage: unknown) => (): ModelResponse =>
    ({
      id: 'msg_bad',
      model: 'claude-haiku-4-5',
      content: [{ type: 'text', text: 'hi' }],
      stopReason: 'end_turn',
      usage,
    }) as ModelResponse;

  test.each([
    ['negative numbers', { inputTokens: -1000, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }],
    ['strings', { inputTokens: '100', outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }],
    ['fractions', { inputTokens: 1.5, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }],
  ])('%s in usage: malformed, retried a bounded number of times, then the run fails saying why', async (_n, usage) => {
    const model = new ScriptedModel([withUsage(usage), withUsage(usage)]);
    const result = await withWorker(suite.env, { model }, async (tq) =>
      runResult(
        await start(tq, {
          model: 'claude-haiku-4-5',
          maxBudgetUsd: 0.01,
          timeouts: { modelMaxAttempts: 2 },
        }),
      ),
    );
    expect(result.exitReason).toBe('failed');
    expect(result.error?.type).toBe(ErrorTypes.MalformedResponse);
    expect(result.error?.message).toContain('usage.inputTokens');
    expect(model.requests).toHaveLength(2);
  });
});
