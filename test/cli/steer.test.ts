import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, testAddress, uniqueQueue, withWorker, type TestEnv } from '../support/temporal';

// The real CLI (the built bin, as a user runs it) against the test server and an in-test worker.
const BIN = path.resolve(__dirname, '..', '..', 'bin', 'durable-agent.js');

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], taskQueue: string): { done: Promise<CliRun> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: testAddress(), TEMPORAL_TASK_QUEUE: taskQueue, ANTHROPIC_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return { done: new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr }))) };
}

test('approve, deny, send, status and interrupt from the CLI steer a live session', async () => {
  const workspace = await tempWorkspace('cli');
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_w', name: 'write_file', input: { path: 'a.txt', content: 'a' } }]),
    text('Wrote a.txt.'),
    text('Second answer.'),
  ]);
  const taskQueue = uniqueQueue('cli');
  const id = `cli-steer-${Date.now()}`;
  await withWorker(env, { model, taskQueue }, async () => {
    const run = cli(
      [
        'run',
        'write a file',
        '--model',
        'scripted-cli',
        '--workspace',
        workspace,
        '--id',
        id,
        '--session',
        '--approve',
        '--no-inline-worker',
        '--json',
      ],
      taskQueue,
    );
    await waitForState(env.client.workflow.getHandle(id), (s) => s.status === 'awaiting_approval');

    const wrong = await cli(['deny', id, 'toolu_nope'], taskQueue).done;
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("no tool call 'toolu_nope' is waiting for approval; waiting: toolu_w");

    const approved = await cli(['approve', id, 'toolu_w'], taskQueue).done;
    expect(approved).toMatchObject({ code: 0 });
    expect(approved.stdout).toContain(`Approved write_file call toolu_w in ${id}.`);

    await waitForState(env.client.workflow.getHandle(id), (s) => s.status === 'awaiting_input');
    const sent = await cli(['send', id, 'and', 'then?'], taskQueue).done;
    expect(sent.code).toBe(0);
    await waitForState(env.client.workflow.getHandle(id), (s) => s.status === 'awaiting_input' && s.iteration === 3);
    expect(JSON.stringify(model.requests[2]?.messages.at(-1))).toContain('and then?');

    const status = await cli(['status', id, '--json'], taskQueue).done;
    expect(JSON.parse(status.stdout)).toMatchObject({
      workflowId: id,
      status: 'awaiting_input',
      iteration: 3,
      session: true,
    });

    const interrupted = await cli(['interrupt', id, '--reason', 'enough'], taskQueue).done;
    expect(interrupted.code).toBe(0);
    const ended = await run.done;
    expect(ended.code).toBe(1);
    expect(JSON.parse(ended.stdout)).toMatchObject({
      exitReason: 'interrupted',
      finalText: 'Second answer.',
      iterations: 3,
    });
    expect(ended.stderr).toContain("run ended 'interrupted': interrupted: enough");
    // Progress went to stderr with --json, including the approval prompt with the real ids.
    expect(ended.stderr).toContain(`durable-agent approve ${id} toolu_w`);
  });
});

test('invalid input is refused by the CLI before anything starts, naming the field', async () => {
  const result = await cli(['run', 'x', '--max-iterations', '0', '--no-inline-worker'], uniqueQueue('cli-bad')).done;
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('maxIterations: maxIterations must be at least 1');
});
