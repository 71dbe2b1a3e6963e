/**
 * The library's client as an application uses it, imported from the package entry (src/index.ts):
 * typed answers from a zod schema or a JSON Schema, refusals with the run's own reason, the
 * conversation with the result, and a cancelled run's result. Real server, real worker, scripted model.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import {
  AgentRun,
  OutputMismatchError,
  RunEndedError,
  RunRefusedError,
  outputSchemaOf,
  typedOutput,
  type AgentRunResult,
  type Message,
} from '../../src';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

jest.setTimeout(90_000);

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const City = z.object({ city: z.string(), population: z.number().int().nonnegative() });
let n = 0;
const id = (label: string) => `agent-run-${label}-${Date.now()}-${++n}`;

test('the package entry exports what docs/output.md shows: typedOutput and outputSchemaOf', () => {
  expect(typeof typedOutput).toBe('function');
  expect(typeof outputSchemaOf).toBe('function');
  expect(outputSchemaOf(City)).toMatchObject({ type: 'object', required: ['city', 'population'] });
  // A zod schema the run cannot be given says why, not a zod internal.
  expect(() => outputSchemaOf(z.object({ at: z.date() }))).toThrow(/no JSON Schema.*Date cannot be represented/);
});

test('AgentRun.start with a zod schema: the run checks its JSON Schema, output() and result() give the typed answer', async () => {
  const workspace = await tempWorkspace('agent-run-typed');
  const model = new ScriptedModel([text('{"city": "Lyon"}'), text('{"city": "Lyon", "population": 522250}')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'Which city?', model: 'scripted-typed', workspace, outputSchema: City },
      { taskQueue, workflowId: id('typed') },
    );
    const city = await run.output();
    // Typed by the schema: a wrong field or type is a compile error (tsc checks this file).
    const population: number = city.population;
    // @ts-expect-error -- not in the schema
    void city.mayor;
    expect(population).toBe(522250);
    const result = await run.result();
    expect(result).toMatchObject({ exitReason: 'completed', iterations: 2, output: { city: 'Lyon' } });
    const name: string | undefined = result.output?.city;
    expect(name).toBe('Lyon');
    // The correction the worker sent named what the zod schema requires.
    expect(JSON.stringify(model.requests[1]!.messages.at(-1)!.content)).toContain(
      "must have required property 'population'",
    );
    // A handle taken later by id reads the same answer typed when given the schema.
    const again = AgentRun.get(env.client, run.workflowId, { outputSchema: City });
    expect((await again.output()).city).toBe('Lyon');
  });
});

test('the zod schema is checked on the client too: a refinement JSON Schema cannot carry throws OutputMismatchError', async () => {
  const Even = z.object({ n: z.number() }).refine((v) => v.n % 2 === 0, { message: 'n must be even' });
  const workspace = await tempWorkspace('agent-run-refine');
  const model = new ScriptedModel([text('{"n": 3}')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'A number', model: 'scripted-refine', workspace, outputSchema: Even },
      { taskQueue, workflowId: id('refine') },
    );
    const error = await run.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputMismatchError);
    expect((error as OutputMismatchError).message).toContain('n must be even');
    // The run's result as it came is kept on the error.
    expect((error as OutputMismatchError).result).toMatchObject({ exitReason: 'completed', output: { n: 3 } });
    await expect(run.output()).rejects.toThrow(OutputMismatchError);
  });
});

test('AgentRun.start with a JSON Schema: output() is the parsed answer, typed as the caller says', async () => {
  const workspace = await tempWorkspace('agent-run-json');
  const model = new ScriptedModel([text('{"ok": true}')]);
  const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start<{ ok: boolean }>(
      env.client,
      { prompt: 'ok?', model: 'scripted-json', workspace, outputSchema: schema },
      { taskQueue, workflowId: id('json') },
    );
    const answer: { ok: boolean } = await run.output();
    expect(answer).toEqual({ ok: true });
  });
});

test('a run without a typed answer: output() says how it ended; a zod 3 schema is refused before anything starts', async () => {
  const workspace = await tempWorkspace('agent-run-untyped');
  const model = new ScriptedModel([text('plain prose')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'hi', model: 'scripted-untyped', workspace },
      { taskQueue, workflowId: id('untyped') },
    );
    await expect(run.output()).rejects.toThrow("run ended 'completed' without a typed answer");
    const zod3Like = { _def: { typeName: 'ZodObject' }, safeParse: () => ({ success: true }) };
    await expect(
      AgentRun.start(
        env.client,
        { prompt: 'hi', outputSchema: zod3Like as unknown as z.ZodType },
        { taskQueue, workflowId: id('zod3') },
      ),
    ).rejects.toThrow(/zod 3 schema: durable-agent takes a zod 4 schema/);
  });
});

test('AgentRun.start refuses an input the run would refuse, saying why, and starts nothing', async () => {
  const workflowId = id('invalid');
  await expect(
    AgentRun.start(env.client, { prompt: 'hi', maxIterations: 0 }, { taskQueue: 'nowhere', workflowId }),
  ).rejects.toThrow(/^Invalid run input: maxIterations: /);
  await expect(
    AgentRun.start(env.client, { prompt: 'hi', unknownField: 1 } as never, { taskQueue: 'nowhere', workflowId }),
  ).rejects.toThrow(/^Invalid run input: .*unknownField/);
  await expect(env.client.workflow.getHandle(workflowId).describe()).rejects.toThrow(/not found/i);
});

test('a refused approve, deny, send or end throws RunRefusedError whose message is the run’s reason, the Temporal error its cause', async () => {
  const workspace = await tempWorkspace('agent-run-refused');
  const model = new ScriptedModel([text('first answer')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'hi', model: 'scripted-refused', workspace, session: true },
      { taskQueue, workflowId: id('refused') },
    );
    for await (const event of run.follow({ intervalMs: 100 })) if (event.kind === 'awaiting_input') break;

    const approve = await run.approve('toolu_nope').catch((e: unknown) => e);
    expect(approve).toBeInstanceOf(RunRefusedError);
    expect((approve as Error).message).toBe("no tool call 'toolu_nope' is waiting for approval; waiting: (none)");
    expect((approve as Error).cause).toBeInstanceOf(WorkflowUpdateFailedError);
    await expect(run.deny('toolu_nope', 'no')).rejects.toThrow(/^no tool call 'toolu_nope' is waiting/);
    await expect(run.send('   ')).rejects.toThrow(/^message must be a non-empty string/);

    expect(await run.end()).toEqual({ status: 'completed' });
    expect((await run.result()).exitReason).toBe('completed');
    // A closed run: says it ended and how, not "workflow not found".
    const late = await run.send('more').catch((e: unknown) => e);
    expect(late).toBeInstanceOf(RunRefusedError);
    expect((late as Error).message).toBe(`run ${run.workflowId} has already ended ('completed')`);
    await expect(run.interrupt('late')).rejects.toThrow(`run ${run.workflowId} has already ended ('completed')`);
  });
});

test('result({ messages: true }) returns the whole conversation with the result, as `result --json --messages` does', async () => {
  const workspace = await tempWorkspace('agent-run-messages');
  const model = new ScriptedModel([toolUse([{ name: 'glob', input: { pattern: '*.md' } }]), text('No Markdown here.')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'Any Markdown?', model: 'scripted-messages', workspace },
      { taskQueue, workflowId: id('messages') },
    );
    const result = await run.result({ messages: true });
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'No Markdown here.' });
    const messages: Message[] = result.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(JSON.stringify(messages[0]!.content)).toContain('Any Markdown?');
    expect(JSON.stringify(messages[2]!.content)).toContain('tool_result');
    expect(JSON.stringify(messages[3]!.content)).toContain('No Markdown here.');
    // Without the option: no messages, as before.
    expect(await run.result()).not.toHaveProperty('messages');
  });
});

test('result() of a run cancelled from Temporal returns its result (exit reason cancelled), messages included', async () => {
  const workspace = await tempWorkspace('agent-run-cancel');
  const model = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'sleep 30' } }], { text: 'Looking first.' }),
    text('unused'),
  ]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'wait a while', model: 'scripted-cancel', workspace, tools: ['bash'] },
      { taskQueue, workflowId: id('cancel') },
    );
    for await (const event of run.follow({ intervalMs: 100 })) if (event.kind === 'tool_call_started') break;
    await run.handle.cancel();
    const result: AgentRunResult & { messages: Message[] } = await run.result({ messages: true });
    expect(result).toMatchObject({
      exitReason: 'cancelled',
      iterations: 1,
      model: 'scripted-cancel',
      finalText: 'Looking first.',
      error: { type: 'DurableAgent.Cancelled' },
    });
    expect(result.messages[0]?.role).toBe('user');
    expect(result.messages.some((m) => JSON.stringify(m.content).includes('sleep 30'))).toBe(true);
    expect((await run.handle.describe()).status.name).toBe('CANCELLED');
  });
});

test('result() throws RunEndedError for a run Temporal ended without a result (terminated)', async () => {
  const workspace = await tempWorkspace('agent-run-terminate');
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'sleep 30' } }]), text('unused')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const run = await AgentRun.start(
      env.client,
      { prompt: 'wait', model: 'scripted-terminate', workspace, tools: ['bash'] },
      { taskQueue, workflowId: id('terminate') },
    );
    for await (const event of run.follow({ intervalMs: 100 })) if (event.kind === 'tool_call_started') break;
    await run.handle.terminate('test');
    const error = await run.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunEndedError);
    expect((error as RunEndedError).status).toBe('terminated');
  });
});
