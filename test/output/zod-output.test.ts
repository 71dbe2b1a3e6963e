/** The library side of typed answers: a zod schema as `outputSchema`, the answer read back typed. */
import { z } from 'zod';
import { runResult, startRun } from '../../src/client';
import { ScriptedModel, text } from '../../src/models/scripted';
import type { AgentRunResult } from '../../src/shared';
import { outputSchemaOf, typedOutput } from '../../src/client/typed-output';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const City = z.object({ city: z.string(), population: z.number().int().nonnegative() });

test('startRun takes a zod schema; the run checks its JSON Schema; typedOutput gives the typed value', async () => {
  const workspace = await tempWorkspace('zod-output');
  const model = new ScriptedModel([text('{"city": "Lyon"}'), text('{"city": "Lyon", "population": 522250}')]);
  const workflowId = `zod-output-${Date.now()}`;
  const result = await withWorker(env, { model }, async (taskQueue) => {
    const handle = await startRun(
      env.client,
      { prompt: 'Which city?', model: 'scripted-zod', workspace, outputSchema: City },
      { workflowId, taskQueue },
    );
    return runResult(handle);
  });
  expect(result).toMatchObject({ exitReason: 'completed', iterations: 2 });
  const city: { city: string; population: number } = typedOutput(result, City);
  expect(city).toEqual({ city: 'Lyon', population: 522250 });
  // The correction named what the zod schema requires, as JSON Schema.
  const correction = model.requests[1]!.messages.at(-1)!;
  expect(JSON.stringify(correction.content)).toContain("must have required property 'population'");
  // The run's input holds the JSON Schema, not the zod object.
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = JSON.parse(Buffer.from(payload?.data ?? []).toString('utf8')) as { outputSchema: unknown };
  expect(input.outputSchema).toEqual(outputSchemaOf(City));
  expect(input.outputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
}, 60_000);

test('typedOutput refuses a result without a typed answer, saying how the run ended', () => {
  const failed: AgentRunResult = {
    exitReason: 'failed',
    finalText: 'Lyon',
    iterations: 3,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    costUsd: 0,
    model: 'm',
    error: { type: 'DurableAgent.OutputInvalid', message: 'the final answer does not match outputSchema' },
  };
  expect(() => typedOutput(failed, City)).toThrow(
    "run ended 'failed' without a typed answer: the final answer does not match outputSchema",
  );
  expect(() => outputSchemaOf(z.date())).toThrow();
});
