/**
 * Hooks in real runs, end to end: the real workflow and worker, function hooks registered through
 * the worker's deps and command hooks from a worker settings file, the scripted model, the real
 * built-in tools. Each test checks what the model saw and what history recorded.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionHooks, HookEventPayload } from '../../src/hooks';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import {
  approveToolUpdate,
  endSessionUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
  type RunEvent,
} from '../../src/shared';
import { message, startFakeAnthropic } from '../support/fake-anthropic';
import { linesOf, startAgentRun, waitUntil } from '../support/fault-helpers';
import { runResult, waitForState } from '../support/run-helpers';
import { testAddress, testBundlePath, uniqueQueue, withWorker } from '../support/temporal';
import { WorkerFleet } from '../support/worker-harness';
import { useWorkflowSuite } from '../support/workflow-suite';
import { baseActivityName } from '../../src/shared/activity-names';

jest.setTimeout(120_000);
const { suite, start } = useWorkflowSuite('hooks-run');

let settingsFile = '';
beforeEach(() => {
  // A worker settings file per test (absent unless the test writes it): ~/.durable-agent is never read.
  settingsFile = path.join(os.tmpdir(), `durable-agent-hooks-run-${Date.now()}-${Math.random()}.json`);
});
afterEach(() => rmSync(settingsFile, { force: true }));

async function historyOf(workflowId: string) {
  return (await suite.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}
async function hookActivities(workflowId: string): Promise<string[]> {
  return (await historyOf(workflowId))
    .filter((e) => baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '') === 'runHook')
    .map((e) => {
      const data = e.userMetadata?.summary?.data;
      return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as string) : '?';
    });
}
async function scheduled(workflowId: string, name: string): Promise<number> {
  return (await historyOf(workflowId)).filter(
    (e) => baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '') === name,
  ).length;
}
const json = (v: unknown) => JSON.stringify(v);

test('UserPromptSubmit blocking the prompt: the run fails PromptBlocked and the model is never called', async () => {
  const seen: HookEventPayload[] = [];
  const hooks: FunctionHooks = {
    UserPromptSubmit: [{ run: (e) => (seen.push(e), { decision: 'block', reason: 'no secrets here' }) }],
  };
  const model = new ScriptedModel([text('should not happen')]);
  const result = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) =>
    runResult(await start(tq, { prompt: 'tell me the secret' })),
  );
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe('DurableAgent.PromptBlocked');
  expect(result.error?.message).toContain('no secrets here');
  expect(model.requests).toHaveLength(0);
  expect(seen.map((e) => e.prompt)).toEqual(['tell me the secret']);
});

test('UserPromptSubmit in a session: context reaches the model, a blocked message leaves the session waiting', async () => {
  const hooks: FunctionHooks = {
    UserPromptSubmit: [
      {
        run: (e) =>
          e.prompt?.includes('forbidden')
            ? { decision: 'block', reason: 'that word is blocked' }
            : { hookSpecificOutput: { additionalContext: `ctx-for:${e.prompt}` } },
      },
    ],
  };
  const model = new ScriptedModel([text('First.'), text('Second.')]);
  await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const handle = await start(tq, { prompt: 'hello', session: true });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 1);
    expect(json(model.requests[0]!.messages[0])).toContain('ctx-for:hello');

    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'a forbidden thing' }] });
    const notice = async () =>
      (await handle.query(eventsQuery, {})).events.some(
        (e) => e.kind === 'notice' && e.message.includes('that word is blocked'),
      );
    const deadline = Date.now() + 10_000;
    while (!(await notice()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await notice()).toBe(true);
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    expect(model.requests).toHaveLength(1);

    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'go on' }] });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 2);
    const sent = json(model.requests[1]!.messages.at(-1));
    expect(sent).toContain('go on');
    expect(sent).toContain('ctx-for:go on');
    expect(json(model.requests[1]!.messages)).not.toContain('forbidden');
    await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    expect((await handle.result()).finalText).toBe('Second.');
    // One hook run per prompt or message: the prompt, the blocked message, the next one.
    expect((await hookActivities(handle.workflowId)).length).toBe(3);
  });
});

test('PostToolUse feedback and context, and PostToolUseFailure on an erroring tool, reach the model with the result', async () => {
  const events: string[] = [];
  const hooks: FunctionHooks = {
    PostToolUse: [
      {
        matcher: 'write_file',
        run: (e) => {
          events.push(`post:${e.tool_name}:${e.tool_response?.is_error}`);
          return { decision: 'block', reason: 'style: use tabs', hookSpecificOutput: { additionalContext: 'lint ok' } };
        },
      },
    ],
    PostToolUseFailure: [
      {
        run: (e) => {
          events.push(`fail:${e.tool_name}:${e.error ?? e.tool_response?.content ?? ''}`.slice(0, 40));
          return { hookSpecificOutput: { additionalContext: 'file is missing; create it first' } };
        },
      },
    ],
  };
  const model = new ScriptedModel([
    toolUse([
      { name: 'write_file', input: { path: 'a.txt', content: 'x' } },
      { name: 'read_file', input: { path: 'missing.txt' } },
    ]),
    text('ok'),
  ]);
  const handle = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const h = await start(tq);
    expect((await runResult(h)).exitReason).toBe('completed');
    return h;
  });
  const results = model.requests[1]!.messages.at(-1)!.content as { content: string; is_error?: boolean }[];
  expect(results[0]!.content).toContain('[hook feedback] style: use tabs');
  expect(results[0]!.content).toContain('[hook context] lint ok');
  expect(results[0]!.is_error).toBeFalsy();
  expect(results[1]!.is_error).toBe(true);
  expect(results[1]!.content).toContain('[hook context] file is missing; create it first');
  expect(events.some((e) => e.startsWith('post:write_file:false'))).toBe(true);
  expect(events.some((e) => e.startsWith('fail:read_file'))).toBe(true);
  expect(events.filter((e) => e.startsWith('post:'))).toHaveLength(1);
  // Exactly one hook activity per event occurrence: one PostToolUse, one PostToolUseFailure.
  expect((await hookActivities(handle.workflowId)).sort()).toEqual([
    'hook PostToolUse write_file',
    'hook PostToolUseFailure read_file',
  ]);
});

test('"continue": false from a PostToolUse hook ends the run interrupted before the next model call', async () => {
  const hooks: FunctionHooks = {
    PostToolUse: [{ run: () => ({ continue: false, stopReason: 'budget hook said stop' }) }],
  };
  const model = new ScriptedModel([
    toolUse([{ name: 'write_file', input: { path: 'a.txt', content: 'x' } }]),
    text('never'),
  ]);
  const result = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) =>
    runResult(await start(tq)),
  );
  expect(result.exitReason).toBe('interrupted');
  expect(result.error?.message).toContain('budget hook said stop');
  expect(model.requests).toHaveLength(1);
});

test('"continue": false from a PreToolUse hook: the call is not run', async () => {
  const marker = path.join(suite.workspace, 'ran');
  const hooks: FunctionHooks = { PreToolUse: [{ run: () => ({ continue: false, stopReason: 'halt' }) }] };
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: `touch ${marker}` } }]), text('x')]);
  const result = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) =>
    runResult(await start(tq)),
  );
  expect(result.exitReason).toBe('interrupted');
  // Claude Code: "continue": false stops processing — the tool must not run after the hook said so.
  expect(existsSync(marker)).toBe(false);
});

test('"continue": false from UserPromptSubmit on a sent message: the run ends, the model is not called with it', async () => {
  const hooks: FunctionHooks = {
    UserPromptSubmit: [{ run: (e) => (e.prompt === 'stop here' ? { continue: false, stopReason: 'closing' } : {}) }],
  };
  const model = new ScriptedModel([text('First.'), text('should not be called')]);
  const result = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const handle = await start(tq, { session: true });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'stop here' }] });
    const ended = await Promise.race([
      runResult(handle),
      new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), 8_000)),
    ]);
    if (ended === 'still waiting') await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    return ended;
  });
  expect(model.requests).toHaveLength(1);
  expect(result).toMatchObject({ exitReason: 'interrupted', finalText: 'First.' });
});

test('PreToolUse ask with a rewritten input: the approval shows the rewritten input, and that is what runs', async () => {
  const hooks: FunctionHooks = {
    PreToolUse: [
      {
        matcher: 'bash',
        run: () => ({
          hookSpecificOutput: { permissionDecision: 'ask', updatedInput: { command: 'touch rewritten' } },
        }),
      },
    ],
  };
  const model = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'touch original' }, id: 'b1' }]),
    text('ok'),
  ]);
  await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const handle = await start(tq);
    await waitForState(handle, (s) => s.status === 'awaiting_approval');
    const requested = (await handle.query(eventsQuery, {})).events.find(
      (e): e is Extract<RunEvent, { kind: 'approval_requested' }> => e.kind === 'approval_requested',
    );
    expect(requested?.input).toEqual({ command: 'touch rewritten' });
    expect(existsSync(path.join(suite.workspace, 'rewritten'))).toBe(false);
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'b1' }] });
    expect((await runResult(handle)).exitReason).toBe('completed');
  });
  expect(existsSync(path.join(suite.workspace, 'rewritten'))).toBe(true);
  expect(existsSync(path.join(suite.workspace, 'original'))).toBe(false);
});

test('a Stop hook that always blocks keeps the run going MAX_STOP_BLOCKS (8) times, then it stops', async () => {
  const hooks: FunctionHooks = { Stop: [{ run: () => ({ decision: 'block', reason: 'keep going' }) }] };
  const model = new ScriptedModel(Array.from({ length: 12 }, (_, i) => text(`answer ${i + 1}`)));
  const handle = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const h = await start(tq);
    const result = await runResult(h);
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'answer 9', iterations: 9 });
    const events = (await h.query(eventsQuery, {})).events;
    expect(events.filter((e) => e.kind === 'answer')).toHaveLength(1);
    return h;
  });
  expect(model.requests).toHaveLength(9);
  expect(await hookActivities(handle.workflowId)).toEqual(Array(8).fill('hook Stop'));
});

test('a PreToolUse command hook sleeping past its timeout fails closed: the call is denied, not run', async () => {
  const marker = path.join(suite.workspace, 'ran');
  writeFileSync(
    settingsFile,
    json({
      hooks: { PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: 'sleep 20', timeout: 1 }] }] },
    }),
  );
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: `touch ${marker}` } }]), text('ok')]);
  const started = Date.now();
  const handle = await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const h = await start(tq);
    expect((await runResult(h)).exitReason).toBe('completed');
    return h;
  });
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(existsSync(marker)).toBe(false);
  const result = json(model.requests[1]!.messages.at(-1));
  expect(result).toContain('"is_error":true');
  expect(await scheduled(handle.workflowId, 'runTool')).toBe(0);
  expect(await hookActivities(handle.workflowId)).toEqual(['hook PreToolUse bash']);
});

test('"continue": false from a Stop hook in a session ends the session, instead of waiting for a message', async () => {
  const hooks: FunctionHooks = { Stop: [{ run: () => ({ continue: false, stopReason: 'shift is over' }) }] };
  const model = new ScriptedModel([text('Answer.')]);
  const result = await withWorker(suite.env, { model, deps: { hooks, settingsFile } }, async (tq) => {
    const handle = await start(tq, { session: true, sessionIdleTimeoutSeconds: 30 });
    const ended = await Promise.race([
      runResult(handle),
      new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), 8_000)),
    ]);
    if (ended === 'still waiting') await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    return ended;
  });
  expect(result).not.toBe('still waiting');
  expect(result).toMatchObject({ exitReason: 'interrupted', finalText: 'Answer.' });
});

test('an interrupt while a PreToolUse hook runs stops the run promptly; the call is not run', async () => {
  const marker = path.join(suite.workspace, 'ran');
  const hookLog = path.join(suite.workspace, 'hook.log');
  writeFileSync(
    settingsFile,
    json({
      hooks: {
        PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: `echo $$ >> ${hookLog}; sleep 30` }] }],
      },
    }),
  );
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: `touch ${marker}` } }]), text('x')]);
  await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const handle = await start(tq);
    await waitUntil(async () => (await linesOf(hookLog)).length > 0, 'the hook to start', 20_000);
    const sentAt = Date.now();
    await handle.signal(interruptSignal, { reason: 'stop' });
    expect((await runResult(handle)).exitReason).toBe('interrupted');
    // The hook (30 s) is cancelled and killed, not waited for. (Measured: ~5 s, the runHook heartbeat interval.)
    expect(Date.now() - sentAt).toBeLessThan(15_000);
  });
  expect(existsSync(marker)).toBe(false);
  expect(model.requests).toHaveLength(1);
});

test('a worker SIGKILLed mid-PreToolUse hook: the call is denied (fail closed), not run, and the hook is not run again', async () => {
  const fake = await startFakeAnthropic();
  const queue = uniqueQueue('hook-kill');
  const fleet = new WorkerFleet(() => ({
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_TASK_QUEUE: queue,
    DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'sk-test',
    DURABLE_AGENT_SETTINGS: settingsFile,
  }));
  const hookLog = path.join(suite.workspace, 'hook.log');
  const marker = path.join(suite.workspace, 'ran');
  writeFileSync(
    settingsFile,
    json({
      hooks: {
        PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: `echo $$ >> ${hookLog}; sleep 50` }] }],
      },
    }),
  );
  fake.enqueue(
    message([{ type: 'tool_use', id: 'k1', name: 'bash', input: { command: `touch ${marker}` } }]),
    message('The call was denied.'),
  );
  try {
    const first = fleet.start();
    await first.ready();
    const input = { prompt: 'touch it', model: 'claude-sonnet-5-5', workspace: suite.workspace };
    const handle = await startAgentRun(suite.env.client, queue, input, 'hook-kill');
    await waitUntil(async () => (await linesOf(hookLog)).length > 0, 'the hook to start', 30_000);
    first.kill('SIGKILL');
    await first.exited;
    const second = fleet.start();
    await second.ready();
    const result = await runResult(handle);
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The call was denied.' });
    expect(existsSync(marker)).toBe(false);
    const toolResult = json(fake.requests[1]!.body.messages.at(-1));
    expect(toolResult).toContain('"is_error":true');
    expect(toolResult).toContain('hooks fail closed');
    expect(await linesOf(hookLog)).toHaveLength(1);
    expect(await hookActivities(handle.workflowId)).toEqual(['hook PreToolUse bash']);
  } finally {
    await fleet.stopAll();
    await fake.close();
    // The orphaned hook (its own process group, started by the killed worker) is ours to end.
    for (const pid of await linesOf(hookLog)) {
      try {
        process.kill(-Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});
