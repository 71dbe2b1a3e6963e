/**
 * Typed answers on the real server, with the real Anthropic SDK against the local fake Messages
 * API: native structured output is asked for, every final answer is checked against the run's
 * `outputSchema`, a mismatch gets corrective turns naming the violations, then the run fails.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AnthropicProvider } from '../../src/models/anthropic';
import { MAX_OUTPUT_CORRECTIONS, OUTPUT_INVALID_ERROR, WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { message } from '../support/fake-anthropic';
import { runResult } from '../support/run-helpers';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useFakeAnthropicSuite } from '../support/workflow-suite';

const t = useFakeAnthropicSuite();

const schema = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
  required: ['city', 'population'],
  additionalProperties: false,
};

let counter = 0;
async function run(input: Partial<AgentRunInput>) {
  const model = new AnthropicProvider({ baseURL: t.fake.url, apiKey: 'sk-test' });
  const workspace = await tempWorkspace('typed-answers');
  return withWorker(t.env, { model }, async (taskQueue) => {
    const handle = await t.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `typed-answers-${Date.now()}-${++counter}`,
      args: [{ prompt: 'Which city?', model: 'claude-sonnet-5-5', workspace, outputSchema: schema, ...input }],
    });
    return { result: await runResult(handle).catch((err: unknown) => err), handle };
  });
}

function lastUserText(i: number): string {
  const messages = t.fake.requests[i]!.body.messages as { role: string; content: unknown }[];
  const content = messages[messages.length - 1]!.content;
  if (typeof content === 'string') return content;
  return (content as { type: string; text?: string }[]).map((b) => b.text ?? '').join('\n');
}

test('a valid first answer completes with the parsed value in output and its JSON text in finalText', async () => {
  t.fake.enqueue(message('{"city": "Lyon", "population": 522250}'));
  const { result } = await run({});
  expect(result).toMatchObject({
    exitReason: 'completed',
    finalText: '{"city": "Lyon", "population": 522250}',
    output: { city: 'Lyon', population: 522250 },
    iterations: 1,
  });
  // Native structured output was asked for, with the run's schema, and tools stay available.
  const body = t.fake.requests[0]!.body;
  expect(body.output_config).toEqual({ format: { type: 'json_schema', schema } });
  expect(body.tools.length).toBeGreaterThan(0);
});

test('an invalid answer gets a corrective turn naming the violations; the corrected one completes', async () => {
  t.fake.enqueue(
    message('```json\n{"city": "Lyon", "population": "many", "mayor": "x"}\n```'),
    message('{"city": "Lyon", "population": 522250}'),
  );
  const { result } = await run({});
  expect(result).toMatchObject({
    exitReason: 'completed',
    output: { city: 'Lyon', population: 522250 },
    iterations: 2,
  });
  expect(t.fake.requests).toHaveLength(2);
  const correction = lastUserText(1);
  expect(correction).toContain('does not match the required JSON Schema');
  expect(correction).toContain('/population must be integer');
  expect(correction).toContain("(root) must not have property 'mayor'");
});

test('an answer that never matches ends the run failed with the violations, after the bounded corrections', async () => {
  for (let i = 0; i <= MAX_OUTPUT_CORRECTIONS; i++) t.fake.enqueue(message(`Lyon, about ${i} people`));
  const { result } = await run({});
  expect(result).toMatchObject({ exitReason: 'failed', error: { type: OUTPUT_INVALID_ERROR } });
  const failed = result as { error: { message: string }; output?: unknown; finalText: string };
  expect(failed.error.message).toContain(`after ${MAX_OUTPUT_CORRECTIONS} corrective turns`);
  expect(failed.error.message).toContain('the answer is not JSON');
  expect(failed.output).toBeUndefined();
  expect(failed.finalText).toBe(`Lyon, about ${MAX_OUTPUT_CORRECTIONS} people`);
  expect(t.fake.requests).toHaveLength(MAX_OUTPUT_CORRECTIONS + 1);
});

test('a schema that is not valid JSON Schema is refused at start, non-retryably, with the validator message', async () => {
  const { result } = await run({ outputSchema: { type: 'object', properties: { a: { type: 'strng' } } } });
  expect(result).toBeInstanceOf(WorkflowFailedError);
  const cause = (result as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe('DurableAgent.InvalidInput');
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  expect((cause as ApplicationFailure).message).toMatch(
    /outputSchema is not valid JSON Schema: schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/,
  );
  // Refused before any model call.
  expect(t.fake.requests).toHaveLength(0);
});

test('a run without outputSchema asks for no structured output and has no output', async () => {
  t.fake.enqueue(message('{"city": "Lyon"}'));
  const { result } = await run({ outputSchema: undefined });
  expect(result).toMatchObject({ exitReason: 'completed', finalText: '{"city": "Lyon"}' });
  expect((result as { output?: unknown }).output).toBeUndefined();
  expect(t.fake.requests[0]!.body.output_config).toBeUndefined();
});
