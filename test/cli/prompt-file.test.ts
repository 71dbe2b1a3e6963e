import { WorkflowNotFoundError } from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { checkPromptSize, readBoundedPrompt } from '../../src/cli/prompt-source';
import { ScriptedModel, text } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared';
import { MAX_PROMPT_BYTES } from '../../src/shared';
import { connectTestEnv, tempWorkspace, uniqueQueue, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent } from './cli-helpers';

/**
 * `run --prompt-file F` and `--prompt-file -` (stdin) through the built CLI, `--network`, and the
 * prompt bound: a prompt over MAX_PROMPT_BYTES is refused with exit code 2 before anything starts.
 */

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('prompt');
});
afterAll(async () => {
  await env?.close();
});

/** The input the run was started with, as recorded in its first history event. */
async function startedInput(workflowId: string): Promise<AgentRunInput> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return JSON.parse(Buffer.from(payload?.data ?? []).toString('utf8')) as AgentRunInput;
}

const runArgs = (workflowId: string) => [
  '--model',
  'scripted-prompt',
  '--workspace',
  workspace,
  '--id',
  workflowId,
  '--no-inline-worker',
  '--json',
];

test('--prompt-file F and --prompt-file - give the model the text of the file and of stdin; --network reaches the input', async () => {
  const promptText = 'Line one of a long task.\n\nLine three, with "quotes" and ünïcödé.\n';
  const file = path.join(workspace, 'task.md');
  await fs.writeFile(file, promptText);
  const model = new ScriptedModel([text('From a file.'), text('From stdin.')]);
  await withWorker(env, { model }, async (taskQueue) => {
    const fromFile = await durableAgent(['run', '--prompt-file', file, ...runArgs(`prompt-${tag}-file`)], {
      taskQueue,
    });
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ exitReason: 'completed', finalText: 'From a file.' });

    const fromStdin = await durableAgent(
      ['run', '--prompt-file', '-', '--network', ...runArgs(`prompt-${tag}-stdin`)],
      { taskQueue, stdin: `\uFEFF${promptText}` },
    );
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toMatchObject({ exitReason: 'completed', finalText: 'From stdin.' });
  });
  // The run input trims the prompt (and the byte-order mark is not part of it).
  expect(model.requests.map((r) => r.messages[0])).toEqual([
    { role: 'user', content: promptText.trim() },
    { role: 'user', content: promptText.trim() },
  ]);
  expect(await startedInput(`prompt-${tag}-file`)).not.toHaveProperty('network');
  expect(await startedInput(`prompt-${tag}-stdin`)).toMatchObject({ network: true, prompt: promptText });
  const details = await env.client.workflow.getHandle(`prompt-${tag}-stdin`).describe();
  expect(await details.staticDetails()).toContain('commands may use the network');
}, 60_000);

test('a prompt over MAX_PROMPT_BYTES is refused with exit code 2 naming the limit, from a file or stdin', async () => {
  const huge = 'x'.repeat(MAX_PROMPT_BYTES + 1);
  const file = path.join(workspace, 'huge.md');
  await fs.writeFile(file, huge);
  // Multi-byte text counts in UTF-8 bytes: fewer characters than the limit, more bytes.
  const wide = path.join(workspace, 'wide.md');
  await fs.writeFile(wide, 'é'.repeat(MAX_PROMPT_BYTES / 2 + 1));
  const taskQueue = uniqueQueue('prompt-idle');
  const limit = `a run's prompt may be at most ${MAX_PROMPT_BYTES.toLocaleString('en-US')} bytes`;
  const attempts = [
    durableAgent(['run', '--prompt-file', file, ...runArgs(`prompt-${tag}-huge-file`)], { taskQueue }),
    durableAgent(['run', '--prompt-file', '-', ...runArgs(`prompt-${tag}-huge-stdin`)], { taskQueue, stdin: huge }),
    durableAgent(['run', '--prompt-file', wide, ...runArgs(`prompt-${tag}-huge-wide`)], { taskQueue }),
  ];
  for (const out of await Promise.all(attempts)) {
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(limit);
    expect(out.stderr).toContain('MAX_PROMPT_BYTES');
    expect(out.stderr).not.toContain('Usage:');
  }
  // Nothing was started.
  for (const label of ['huge-file', 'huge-stdin', 'huge-wide']) {
    await expect(env.client.workflow.getHandle(`prompt-${tag}-${label}`).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  }
});

test('a prompt exactly at the limit is accepted; one byte more is not (the reader, and the check on an argument)', async () => {
  expect(() => checkPromptSize('é'.repeat(MAX_PROMPT_BYTES / 2))).not.toThrow();
  expect(() => checkPromptSize('é'.repeat(MAX_PROMPT_BYTES / 2) + 'x')).toThrow(
    `the prompt is ${(MAX_PROMPT_BYTES + 1).toLocaleString('en-US')} bytes`,
  );
  const atLimit = 'y'.repeat(MAX_PROMPT_BYTES);
  await expect(readBoundedPrompt(Readable.from([Buffer.from(atLimit)]))).resolves.toBe(atLimit);
  await expect(readBoundedPrompt(Readable.from([Buffer.from(atLimit), Buffer.from('y')]))).rejects.toThrow(
    `more than ${MAX_PROMPT_BYTES.toLocaleString('en-US')} bytes`,
  );
});

test('bad --prompt-file uses are usage errors with exit code 2', async () => {
  const empty = path.join(workspace, 'empty.md');
  await fs.writeFile(empty, '  \n');
  const cases: Array<[string[], string]> = [
    [
      ['run', 'inline', '--prompt-file', empty],
      'give the prompt either as an argument or with --prompt-file, not both',
    ],
    [['run', '--prompt-file', empty], `the prompt from ${empty} is empty`],
    [['run', '--prompt-file', path.join(workspace, 'missing.md')], '--prompt-file: no such file'],
    [['run', '--prompt-file', workspace], 'is a directory, not a file'],
  ];
  for (const [args, message] of cases) {
    const out = await durableAgent([...args, '--no-inline-worker'], { taskQueue: uniqueQueue('prompt-bad') });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(message);
  }
  const emptyStdin = await durableAgent(['run', '--prompt-file', '-', '--no-inline-worker'], { stdin: '' });
  expect(emptyStdin.code).toBe(2);
  expect(emptyStdin.stderr).toContain('the prompt from standard input is empty');
});
