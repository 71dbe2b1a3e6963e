/**
 * Iteration limits in sessions (docs/sessions.md: `maxIterations` bounds each message's turn and the count
 * starts again per message; `maxSessionIterations` bounds the whole session), end to end with the
 * real workflow and worker, the scripted model and the real tools, across continue-as-new.
 */
import type { FunctionHooks } from '../../src/hooks';
import { ScriptedModel, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import {
  SUMMARY_INSTRUCTION,
  endSessionUpdate,
  eventsQuery,
  sendMessageUpdate,
  type ModelRequest,
} from '../../src/shared';
import { runResult, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('session-limits');

const isSummary = (r: ModelRequest | undefined) => JSON.stringify(r?.messages.at(-1)).includes(SUMMARY_INSTRUCTION);
const write = (name: string) => toolUse([{ name: 'write_file', input: { path: `${name}.txt`, content: name } }]);

test('maxIterations bounds each message: the closing summary answers message 1, message 2 gets fresh calls', async () => {
  const model = new ScriptedModel([
    write('a1'),
    write('a2'),
    text('Summary of message one.'),
    write('b1'),
    text('Second answer.'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { session: true, maxIterations: 2 });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    expect(model.requests).toHaveLength(3);
    expect(model.requests.map(isSummary)).toEqual([false, false, true]);
    const events = (await handle.query(eventsQuery, {})).events;
    expect(events.some((e) => e.kind === 'notice' && e.message.includes('reached maxIterations (2)'))).toBe(true);
    expect(events.filter((e) => e.kind === 'answer').map((e) => (e as { text: string }).text)).toEqual([
      'Summary of message one.',
    ]);
    expect((await handle.query(eventsQuery, {})).events.at(-1)?.kind).toBe('awaiting_input');

    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'now the second part' }] });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 4);
    expect(model.requests.map(isSummary)).toEqual([false, false, true, false, false]);
    // Message 2 is seen after message 1's summary, as its own user turn.
    const second = model.requests[3]!.messages;
    expect(JSON.stringify(second.at(-2))).toContain('Summary of message one.');
    expect(JSON.stringify(second.at(-1))).toContain('now the second part');
    await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    expect(await runResult(handle)).toMatchObject({
      exitReason: 'completed',
      finalText: 'Second answer.',
      iterations: 4,
    });
  });
});

test('maxSessionIterations ends the session max_iterations, with a closing summary', async () => {
  const model = new ScriptedModel([text('One.'), write('x'), text('Three.'), text('Session summary.')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { session: true, maxIterations: 5, maxSessionIterations: 3 });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 1);
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'more' }] });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 3);
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'again' }] });
    const result = await runResult(handle);
    expect(result).toMatchObject({ exitReason: 'max_iterations', finalText: 'Session summary.', iterations: 3 });
    expect(model.requests.map(isSummary)).toEqual([false, false, false, true]);
  });
});

test('maxIterations outside a session still bounds the whole run (no per-message reset)', async () => {
  const model = new ScriptedModel([write('a'), write('b'), text('Run summary.')]);
  const result = await withWorker(suite.env, { model }, async (tq) => runResult(await start(tq, { maxIterations: 2 })));
  expect(result).toMatchObject({ exitReason: 'max_iterations', finalText: 'Run summary.', iterations: 2 });
});

test('across continue-as-new the per-message count carries: a long message still stops at maxIterations', async () => {
  const perMessage = 6;
  const steps: ScriptStep[] = [text('Hello.')];
  for (let i = 0; i < perMessage; i++) steps.push(write(`m2-${i}`));
  steps.push(text('Summary of message two.'), text('Third answer.'));
  const model = new ScriptedModel(steps);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {
      session: true,
      maxIterations: perMessage,
      continueAsNewAfter: { events: 50 },
    });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 1);
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'write many files' }] });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 1 + perMessage, 40_000);
    const events = (await handle.query(eventsQuery, {})).events;
    // The run really continued as new while message 2's turn ran.
    const secondTurn = events.find((e) => e.kind === 'model_call_started' && e.iteration === 2)!.seq;
    const lastCall = events.find((e) => e.kind === 'model_call_started' && e.iteration === 1 + perMessage)!.seq;
    const handOvers = events.filter((e) => e.kind === 'notice' && e.message.startsWith('continued as new'));
    expect(handOvers.some((e) => e.seq > secondTurn && e.seq < lastCall)).toBe(true);
    expect(model.requests.map(isSummary)).toEqual([false, ...Array(perMessage).fill(false), true]);

    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'one more' }] });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 2 + perMessage, 30_000);
    expect(isSummary(model.requests.at(-1))).toBe(false);
    await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    expect(await runResult(handle)).toMatchObject({ exitReason: 'completed', finalText: 'Third answer.' });
  });
});

test('the Stop-hook cap (8 blocks in a row) holds across continue-as-new', async () => {
  const hooks: FunctionHooks = { Stop: [{ run: () => ({ decision: 'block', reason: 'keep going' }) }] };
  const model = new ScriptedModel(Array.from({ length: 30 }, (_, i) => text(`answer ${i + 1}`)));
  const settingsFile = `/nonexistent/durable-agent-settings-${Date.now()}.json`;
  const result = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const handle = await start(tq, { maxIterations: 30, continueAsNewAfter: { events: 50 } });
    const res = await runResult(handle);
    const events = (await handle.query(eventsQuery, {})).events;
    expect(events.some((e) => e.kind === 'notice' && e.message.startsWith('continued as new'))).toBe(true);
    return res;
  });
  // As without continue-as-new: the first answer and 8 blocked stops, then the run ends.
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'answer 9', iterations: 9 });
});
