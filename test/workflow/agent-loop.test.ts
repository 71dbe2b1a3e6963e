import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ScriptedModel, fail, text, toolUse } from '../../src/models/scripted';
import type { ModelProvider } from '../../src/models/types';
import type { AgentRunInput } from '../../src/shared';
import {
  SUMMARY_FALLBACK_TEXT,
  SUMMARY_INSTRUCTION,
  WORKFLOW_TYPE,
  interruptSignal,
  stateQuery,
} from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import type { agentWorkflow } from '../../src/workflows';
import { runResult, toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { baseActivityName } from '../../src/shared/activity-names';

const { suite } = useWorkflowSuite('loop');

let counter = 0;
const workflowId = (label: string) => `${label}-${Date.now()}-${++counter}`;

function start(taskQueue: string, input: Partial<AgentRunInput> & { prompt?: string }, id = workflowId('run')) {
  return suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: id,
    args: [{ prompt: 'do the thing', model: 'scripted-test', workspace: suite.workspace, ...input }],
  });
}

async function scheduledActivities(id: string): Promise<string[]> {
  const history = await suite.env.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? [])
    .map((e) => baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
    .filter((n): n is string => !!n);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });

test('a text-only reply completes the run with its text, usage and cost', async () => {
  const model = new ScriptedModel([text('Hello there.', { usage: { inputTokens: 12, outputTokens: 4 } })]);
  const id = workflowId('text');
  const result = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { prompt: 'Say hello' }, id)).result(),
  );
  expect(result).toMatchObject({
    exitReason: 'completed',
    finalText: 'Hello there.',
    iterations: 1,
    model: 'scripted-test',
  });
  expect(result.usage.inputTokens + result.usage.outputTokens).toBeGreaterThan(0);
  expect(result.costUsd).toBe(0);
  expect(model.requests).toHaveLength(1);
  expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: 'Say hello' }]);
  expect(model.requests[0]?.tools.map((t) => t.name).sort()).toEqual(
    ['bash', 'edit_file', 'glob', 'grep', 'read_file', 'write_file'].sort(),
  );
  expect(await scheduledActivities(id)).toEqual(['firstModelCall']);
});

test('one tool round trip: the tool runs in the workspace and its result reaches the model', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_w', name: 'write_file', input: { path: 'notes/a.txt', content: 'alpha\nbeta\n' } }]),
    text('Wrote it.'),
  ]);
  const id = workflowId('roundtrip');
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {}, id)).result());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Wrote it.', iterations: 2 });
  expect(await fs.readFile(path.join(suite.workspace, 'notes/a.txt'), 'utf8')).toBe('alpha\nbeta\n');
  const second = model.requests[1];
  expect(second?.messages).toHaveLength(3);
  expect(second?.messages[1]?.role).toBe('assistant');
  const [res] = toolResults(second?.messages[2]);
  expect(res).toMatchObject({ tool_use_id: 'toolu_w' });
  expect(res?.is_error).toBeUndefined();
  expect(res?.content).toMatch(/Wrote 11 bytes/);
  expect(await scheduledActivities(id)).toEqual(['firstModelCall', 'runTool', 'callModel']);
});

test('three parallel tool calls come back in one user message, keyed by id, in tool_use order', async () => {
  await fs.writeFile(path.join(suite.workspace, 'one.txt'), 'first file\n');
  await fs.writeFile(path.join(suite.workspace, 'two.txt'), 'second file\n');
  const model = new ScriptedModel([
    toolUse([
      // The slowest call first: results must still follow tool_use order, not completion order.
      { id: 'toolu_slow', name: 'bash', input: { command: 'sleep 1; echo slow-done' } },
      { id: 'toolu_r1', name: 'bash', input: { command: 'cat one.txt' } },
      { id: 'toolu_r2', name: 'bash', input: { command: 'cat two.txt' } },
    ]),
    text('done'),
  ]);
  const id = workflowId('parallel');
  const startedAt = Date.now();
  await withWorker(suite.env, { model }, async (tq) => (await start(tq, {}, id)).result());
  const results = toolResults(model.requests[1]?.messages[2]);
  expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_slow', 'toolu_r1', 'toolu_r2']);
  expect(results[0]?.content).toContain('slow-done');
  expect(results[1]?.content).toContain('first file');
  expect(results[2]?.content).toContain('second file');
  expect(model.requests[1]?.messages).toHaveLength(3);

  // Parallel: all three were scheduled before any of them completed.
  const history = await suite.env.client.workflow.getHandle(id).fetchHistory();
  const kinds = (history.events ?? [])
    .map((e) =>
      baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '') === 'runTool'
        ? 'scheduled'
        : e.activityTaskCompletedEventAttributes
          ? 'completed'
          : undefined,
    )
    .filter(Boolean);
  // callModel completed (run start is a local activity: a marker), then 3 scheduled, then completions.
  expect(kinds.slice(1, 4)).toEqual(['scheduled', 'scheduled', 'scheduled']);
  expect(Date.now() - startedAt).toBeLessThan(20_000);
});

test('read-only built-in tools run as local activities, in parallel with the rest, results in tool_use order', async () => {
  await fs.writeFile(path.join(suite.workspace, 'one.txt'), 'first file\n');
  const model = new ScriptedModel([
    toolUse([
      { id: 'toolu_b', name: 'bash', input: { command: 'sleep 1; echo slow-done' } },
      { id: 'toolu_r', name: 'read_file', input: { path: 'one.txt' } },
      { id: 'toolu_g', name: 'glob', input: { pattern: '*.txt' } },
    ]),
    text('done'),
  ]);
  const id = workflowId('local');
  await withWorker(suite.env, { model }, async (tq) => (await start(tq, {}, id)).result());
  const results = toolResults(model.requests[1]?.messages[2]);
  expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_b', 'toolu_r', 'toolu_g']);
  expect(results[1]?.content).toContain('first file');
  expect(results[2]?.content).toContain('one.txt');
  // Only bash went through the server's activity queue; the read-only tools left local-activity markers.
  // Run start goes with the first model call (firstModelCall).
  expect(await scheduledActivities(id)).toEqual(['firstModelCall', 'runTool', 'callModel']);
  const history = await suite.env.client.workflow.getHandle(id).fetchHistory();
  const markers = (history.events ?? []).filter(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  );
  // The two read-only tools.
  expect(markers).toHaveLength(2);
});

test('a custom read-only tool that sets runsLocally runs as a local activity; one without it as a regular activity', async () => {
  const tools = createDefaultRegistry();
  const lookup = (name: string, runsLocally: boolean) =>
    tools.register({
      name,
      description: `looks a word up (${name})`,
      inputSchema: z.strictObject({ word: z.string() }),
      sideEffect: 'read_only',
      ...(runsLocally ? { runsLocally } : {}),
      execute: async ({ word }: { word: string }) => `${name}: ${word.toUpperCase()}`,
    });
  lookup('quick_lookup', true);
  lookup('slow_lookup', false);
  const model = new ScriptedModel([
    toolUse([
      { id: 'toolu_q', name: 'quick_lookup', input: { word: 'cat' } },
      { id: 'toolu_s', name: 'slow_lookup', input: { word: 'dog' } },
    ]),
    text('done'),
  ]);
  const id = workflowId('custom-local');
  await withWorker(suite.env, { model, deps: { tools } }, async (tq) => (await start(tq, {}, id)).result());
  expect(toolResults(model.requests[1]?.messages[2]).map((r) => r.content)).toEqual([
    'quick_lookup: CAT',
    'slow_lookup: DOG',
  ]);
  // slow_lookup is the only runTool through the server; quick_lookup left a local-activity marker.
  expect(await scheduledActivities(id)).toEqual(['firstModelCall', 'runTool', 'callModel']);
  const history = await suite.env.client.workflow.getHandle(id).fetchHistory();
  const markers = (history.events ?? []).filter(
    (e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity',
  );
  // The tool that runs locally.
  expect(markers).toHaveLength(1);
});

test('an unknown tool becomes an is_error result and the loop continues', async () => {
  const model = new ScriptedModel([toolUse([{ id: 'toolu_x', name: 'teleport', input: {} }]), text('ok, no teleport')]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result.exitReason).toBe('completed');
  const [res] = toolResults(model.requests[1]?.messages[2]);
  expect(res?.is_error).toBe(true);
  expect(res?.content).toMatch(/^Error: Tool 'teleport' not found/);
  expect(res?.content).toContain('read_file');
});

test('a tool that exists but is not enabled for the run is refused like an unknown one', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_b', name: 'bash', input: { command: 'touch should-not-exist' } }]),
    text('fine'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { tools: ['read_file'] })).result(),
  );
  expect(result.exitReason).toBe('completed');
  expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(['read_file']);
  const [res] = toolResults(model.requests[1]?.messages[2]);
  expect(res).toMatchObject({
    is_error: true,
    content: "Error: Tool 'bash' not found. Unknown tool; this run's tools are: read_file.",
  });
  await expect(fs.stat(path.join(suite.workspace, 'should-not-exist'))).rejects.toThrow();
});

test('arguments failing the schema become an is_error result naming the field', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_bad', name: 'read_file', input: { path: 42 } }]),
    text('I will fix my arguments'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result.exitReason).toBe('completed');
  const [res] = toolResults(model.requests[1]?.messages[2]);
  expect(res?.is_error).toBe(true);
  expect(res?.content).toContain('path');
});

test('a tool that throws becomes an is_error result and the loop continues', async () => {
  const tools = createDefaultRegistry();
  tools.register({
    name: 'explode',
    description: 'always throws',
    inputSchema: z.object({}),
    sideEffect: 'read_only',
    execute: async () => {
      throw new Error('kaboom: the widget is on fire');
    },
  });
  const model = new ScriptedModel([toolUse([{ id: 'toolu_e', name: 'explode', input: {} }]), text('noted')]);
  const result = await withWorker(suite.env, { model, deps: { tools } }, async (tq) => (await start(tq, {})).result());
  expect(result.exitReason).toBe('completed');
  const [res] = toolResults(model.requests[1]?.messages[2]);
  expect(res?.is_error).toBe(true);
  expect(res?.content).toContain('kaboom: the widget is on fire');
});

test('at maxIterations a summary call with tool_choice none closes the run without touching its history', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'glob', input: { pattern: '**/*' } }]),
    toolUse([{ id: 'toolu_2', name: 'glob', input: { pattern: '*.md' } }]),
    text('Summary: I globbed twice.'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, { maxIterations: 2 })).result());
  expect(result).toMatchObject({ exitReason: 'max_iterations', finalText: 'Summary: I globbed twice.', iterations: 2 });
  expect(model.requests).toHaveLength(3);
  const summary = model.requests[2];
  expect(summary?.toolChoice).toEqual({ type: 'none' });
  expect(summary?.tools.length).toBeGreaterThan(0);
  // The instruction rides on the last user turn of this request only.
  const last = summary?.messages[summary.messages.length - 1];
  expect(JSON.stringify(last)).toContain(SUMMARY_INSTRUCTION);
  expect(summary?.messages).toHaveLength(5);
  expect(JSON.stringify(model.requests[1]?.messages)).not.toContain(SUMMARY_INSTRUCTION);
});

test('when the summary call fails the run still ends with the fallback text', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'glob', input: { pattern: '*' } }]),
    fail(ApplicationFailure.nonRetryable('summary model unavailable', 'ModelError.BadRequest')),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, { maxIterations: 1 })).result());
  expect(result).toMatchObject({ exitReason: 'max_iterations', finalText: SUMMARY_FALLBACK_TEXT, iterations: 1 });
});

test('when the budget is spent the run ends before the next model call', async () => {
  // claude-sonnet-5-5: 100k in × $2/M + 10k out × $10/M = $0.30 per call.
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'glob', input: { pattern: '*' } }], {
      usage: { inputTokens: 100_000, outputTokens: 10_000 },
    }),
    text('never reached'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { model: 'claude-sonnet-5-5', maxBudgetUsd: 0.25 })).result(),
  );
  expect(result.exitReason).toBe('max_budget');
  expect(result.costUsd).toBeCloseTo(0.3, 6);
  expect(model.requests).toHaveLength(1);
});

test('an interrupt during a slow model call returns within seconds with status interrupted', async () => {
  let aborted = false;
  const slow: ModelProvider = {
    name: 'slow',
    async call(_req, ctx) {
      const beat = setInterval(() => ctx.heartbeat(), 200);
      try {
        await sleep(60_000, ctx.signal);
      } catch (e) {
        aborted = true;
        throw e;
      } finally {
        clearInterval(beat);
      }
      throw new Error('unreachable');
    },
  };
  const result = await withWorker(suite.env, { model: slow }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.status === 'running');
    await new Promise((r) => setTimeout(r, 500));
    const sentAt = Date.now();
    await handle.signal(interruptSignal, { reason: 'operator said stop' });
    const res = await handle.result();
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    const state = await handle.query(stateQuery);
    expect(state.status).toBe('interrupted');
    // The activity learns of the cancellation through its heartbeat and aborts its request.
    const deadline = Date.now() + 5_000;
    while (!aborted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    return res;
  });
  expect(result.exitReason).toBe('interrupted');
  expect(result.error?.message).toContain('operator said stop');
  expect(aborted).toBe(true);
});

test('an interrupt during a long bash command kills it and ends the run', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_sleep', name: 'bash', input: { command: 'sleep 45; touch finished.txt' } }]),
    text('never'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.activeTools.includes('bash'));
    await new Promise((r) => setTimeout(r, 500));
    const sentAt = Date.now();
    await handle.signal(interruptSignal, {});
    const res = await handle.result();
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    return res;
  });
  expect(result.exitReason).toBe('interrupted');
  expect(model.requests).toHaveLength(1);
  await new Promise((r) => setTimeout(r, 1500));
  await expect(fs.stat(path.join(suite.workspace, 'finished.txt'))).rejects.toThrow();
});

test('the state query reports iteration, usage, cost and running tools mid-run', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_1', name: 'bash', input: { command: 'sleep 3; echo ok' } }], { usage: { outputTokens: 9 } }),
    text('done'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { maxIterations: 7 });
    const mid = await waitForState(handle, (s) => s.activeTools.length > 0);
    expect(mid).toMatchObject({ status: 'running', iteration: 1, maxIterations: 7, activeTools: ['bash'], costUsd: 0 });
    expect(mid.lastStopReason).toBe('tool_use');
    expect(mid.usage.outputTokens).toBeGreaterThan(0);
    await handle.result();
    const end = await handle.query(stateQuery);
    expect(end).toMatchObject({ status: 'completed', iteration: 2, activeTools: [] });
  });
});

test('a refusal ends the run refused and its tool calls are never run', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_r', name: 'write_file', input: { path: 'x.txt', content: 'x' } }], { stopReason: 'refusal' }),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result.exitReason).toBe('refused');
  await expect(fs.stat(path.join(suite.workspace, 'x.txt'))).rejects.toThrow();
});

test('max_tokens: possibly truncated tool calls are not run and the model is asked to retry', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_t', name: 'write_file', input: { path: 'cut.txt', content: 'partial' } }], {
      stopReason: 'max_tokens',
    }),
    text('retrying later'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result.exitReason).toBe('completed');
  const [res] = toolResults(model.requests[1]?.messages[2]);
  expect(res).toMatchObject({ tool_use_id: 'toolu_t', is_error: true });
  expect(res?.content).toContain('max_tokens');
  await expect(fs.stat(path.join(suite.workspace, 'cut.txt'))).rejects.toThrow();
});

test('invalid run input fails the run at once with a readable, non-retryable error', async () => {
  const model = new ScriptedModel([]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await suite.env.client.workflow.start(WORKFLOW_TYPE, {
      taskQueue: tq,
      workflowId: workflowId('invalid'),
      args: [{ prompt: '', maxIterations: 0, tools: ['tele port'] }],
    });
    const error = await handle.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('DurableAgent.InvalidInput');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toMatch(/prompt/);
    expect(cause.message).toMatch(/maxIterations: maxIterations must be at least 1/);
    expect(cause.message).toMatch(/tool name 'tele port' is not a tool name/);
  });
  expect(model.requests).toHaveLength(0);
});

test('a model failure that exhausts retries ends the run failed with the cause', async () => {
  const model = new ScriptedModel([
    fail(
      ApplicationFailure.create({
        message: 'invalid x-api-key',
        type: 'ModelError.Authentication',
        nonRetryable: true,
      }),
    ),
  ]);
  const { result, description } = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    return { result: await runResult(handle), description: await handle.describe() };
  });
  // Failed in Temporal too, with the AgentRunResult in the failure's details.
  expect(description.status.name).toBe('FAILED');
  expect(result.exitReason).toBe('failed');
  expect(result.error).toEqual({ type: 'ModelError.Authentication', message: 'invalid x-api-key' });
  expect(model.requests).toHaveLength(1);
});
