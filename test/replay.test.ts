import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { execFileSync } from 'node:child_process';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../src/models/scripted';
import { WORKFLOW_TYPE } from '../src/shared';
import type { agentWorkflow } from '../src/workflows';
import {
  connectTestEnv,
  quietRuntime,
  tempWorkspace,
  testAddress,
  testBundlePath,
  withWorker,
} from './support/temporal';
import { createMcpRuntime } from '../src/mcp';
import { stdioTestServer } from './mcp/support/servers';
import { RoutedModel } from './subagents/routed-model';

/**
 * Replay tests: histories of real runs, recorded once and committed, replayed against today's
 * workflow code. A change that would break runs in flight (non-determinism) fails here; such a
 * change must go behind `patched()`.
 *
 * Re-record (only when a history shape is intended to change): `npm run record-histories`.
 */
const HISTORIES = path.join(__dirname, 'histories');

const recordOnly = process.env.DA_RECORD_HISTORIES === '1' ? test : test.skip;

recordOnly('record: a multi-step run with parallel tools, an error result and a max-iterations summary', async () => {
  const env = await connectTestEnv();
  try {
    const workspace = await tempWorkspace('record');
    await fs.writeFile(path.join(workspace, 'README.md'), '# demo\nhello world\n');
    const model = new ScriptedModel([
      toolUse(
        [
          { id: 'toolu_01', name: 'glob', input: { pattern: '**/*' } },
          { id: 'toolu_02', name: 'read_file', input: { path: 'README.md' } },
          { id: 'toolu_03', name: 'nonexistent_tool', input: {} },
        ],
        { text: 'Looking around.', usage: { inputTokens: 120, outputTokens: 40 } },
      ),
      toolUse([{ id: 'toolu_04', name: 'write_file', input: { path: 'out/notes.txt', content: 'hello\n' } }], {
        usage: { inputTokens: 300, outputTokens: 30 },
      }),
      toolUse([{ id: 'toolu_05', name: 'bash', input: { command: 'wc -c out/notes.txt' } }], {
        usage: { inputTokens: 350, outputTokens: 20 },
      }),
      text('Summary: listed files, read the README, wrote notes.', { usage: { inputTokens: 400, outputTokens: 15 } }),
    ]);
    const workflowId = `recorded-multi-step-${Date.now()}`;
    await withWorker(env, { model }, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [{ prompt: 'Explore and take notes', model: 'scripted-demo', workspace, maxIterations: 3 }],
      });
      const result = await handle.result();
      expect(result.exitReason).toBe('max_iterations');
    });
    // The CLI writes the canonical JSON history format (the same as the Web UI's download).
    const cli = process.env.DA_TEST_TEMPORAL_CLI!;
    const json = execFileSync(cli, [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      testAddress(),
      '--output',
      'json',
    ]);
    await fs.mkdir(HISTORIES, { recursive: true });
    // A new file per recording: older histories stay, so runs started by older code keep being checked.
    const label = process.env.DA_RECORD_LABEL ?? new Date().toISOString().slice(0, 10);
    await fs.writeFile(path.join(HISTORIES, `multi-step-max-iterations-${label}.json`), json);
  } finally {
    await env.close();
  }
});

recordOnly('record: a run with MCP tools (read-only, mutating, an image, a tool list change)', async () => {
  const env = await connectTestEnv();
  const runtime = createMcpRuntime();
  try {
    const workspace = await tempWorkspace('record-mcp');
    const model = new ScriptedModel([
      toolUse([
        { id: 'toolu_m1', name: 'mcp__test__lookup', input: { key: 'alpha' } },
        { id: 'toolu_m2', name: 'mcp__test__append_note', input: { note: 'hi' } },
        { id: 'toolu_m3', name: 'mcp__test__picture', input: {} },
      ]),
      toolUse([{ id: 'toolu_m4', name: 'mcp__test__add_tool', input: {} }]),
      toolUse([{ id: 'toolu_m5', name: 'mcp__test__extra_1', input: {} }]),
      text('Looked up, noted, pictured, extended.'),
    ]);
    const workflowId = `recorded-mcp-${Date.now()}`;
    await withWorker(env, { model, deps: { mcp: runtime } }, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [
          { prompt: 'Use the MCP tools', model: 'scripted-demo', workspace, mcpServers: { test: stdioTestServer() } },
        ],
      });
      expect((await handle.result()).exitReason).toBe('completed');
    });
    const json = execFileSync(process.env.DA_TEST_TEMPORAL_CLI!, [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      testAddress(),
      '--output',
      'json',
    ]);
    const label = process.env.DA_RECORD_LABEL ?? new Date().toISOString().slice(0, 10);
    await fs.writeFile(path.join(HISTORIES, `mcp-tools-${label}.json`), json);
  } finally {
    await runtime.close();
    await env.close();
  }
});

recordOnly('record: a run whose task calls start two subagents (one named) in parallel', async () => {
  const env = await connectTestEnv();
  try {
    const workspace = await tempWorkspace('record-subagents');
    await fs.writeFile(path.join(workspace, 'README.md'), '# demo\nhello world\n');
    const parent = new ScriptedModel([
      toolUse([
        { id: 'toolu_s1', name: 'task', input: { prompt: 'child one: read the README', description: 'read' } },
        { id: 'toolu_s2', name: 'task', input: { prompt: 'child two: say hi', agent: 'greeter' } },
      ]),
      text('Both subagents answered.'),
    ]);
    const one = new ScriptedModel([
      toolUse([{ id: 'toolu_c1', name: 'read_file', input: { path: 'README.md' } }], { usage: { inputTokens: 50 } }),
      text('It says hello world.', { usage: { inputTokens: 60 } }),
    ]);
    const two = new ScriptedModel([text('hi', { usage: { inputTokens: 10 } })]);
    const model = new RoutedModel({ Delegate: parent, 'child one': one, 'child two': two });
    const workflowId = `recorded-subagents-${Date.now()}`;
    await withWorker(env, { model }, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [
          {
            prompt: 'Delegate to subagents',
            model: 'scripted-demo',
            workspace,
            tools: ['read_file', 'task'],
            agents: { greeter: { description: 'Says hi', prompt: 'You greet.' } },
          },
        ],
      });
      expect((await handle.result()).exitReason).toBe('completed');
    });
    const label = process.env.DA_RECORD_LABEL ?? new Date().toISOString().slice(0, 10);
    // The parent's history and its first child's (which reports to the parent by signal).
    for (const [id, name] of [
      [workflowId, 'subagents-parent'],
      [`${workflowId}.task-1`, 'subagents-child'],
    ]) {
      const json = execFileSync(process.env.DA_TEST_TEMPORAL_CLI!, [
        'workflow',
        'show',
        '--workflow-id',
        id!,
        '--address',
        testAddress(),
        '--output',
        'json',
      ]);
      const recorded = { workflowId: id, ...JSON.parse(json.toString('utf8')) };
      await fs.writeFile(path.join(HISTORIES, `${name}-${label}.json`), JSON.stringify(recorded, null, 2));
    }
  } finally {
    await env.close();
  }
});

async function loadHistories() {
  const files = (await fs.readdir(HISTORIES)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => {
      // A run whose commands name its own id (a parent's child ids) is recorded with that id beside its events.
      const { workflowId, ...history } = JSON.parse(await fs.readFile(path.join(HISTORIES, file), 'utf8'));
      return { workflowId: typeof workflowId === 'string' ? workflowId : file, history: historyFromJSON(history) };
    }),
  );
}

async function replayFailures(workflowBundle: { code: string } | { codePath: string }): Promise<string[]> {
  quietRuntime();
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle }, await loadHistories())) {
    if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
  }
  return failures;
}

test('recorded histories replay without non-determinism against the current workflow code', async () => {
  expect((await loadHistories()).length).toBeGreaterThan(0);
  expect(await replayFailures({ codePath: testBundlePath() })).toEqual([]);
});

test('the replay check catches a workflow change that would break runs in flight', async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./fixtures/drifted-workflow'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  const failures = await replayFailures({ code });
  expect(failures.length).toBe((await loadHistories()).length);
  expect(failures[0]).toMatch(/[Nn]ondeterminism|DeterminismViolation|does not match/);
});
