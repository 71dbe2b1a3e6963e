import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { AgentRunInput, AgentRunResult } from '../../src/shared';
import { INPUT_PREVIEW_CHARS, WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { eventually, runResult, waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, uniqueQueue, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent } from './cli-helpers';

/**
 * Approval spoofing, driven through the real CLI against real runs: a model's command holding
 * escape sequences (which once printed `bash: ls -la` over `touch EVIL_RAN; …`), a command whose
 * tail lies past what the run records of it, and answers carrying clipboard and title sequences.
 * Everything the CLI prints shows those characters as visible stand-ins, and an approval shows
 * the whole command that would run.
 */

/** A character a terminal would act on (newline and tab aside). */
// eslint-disable-next-line no-control-regex
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('spoofing');
});
afterAll(async () => {
  await env?.close();
});

function start(taskQueue: string, workflowId: string, input: Partial<AgentRunInput> = {}) {
  return env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [{ prompt: 'tidy up', model: 'scripted-spoof', workspace, approveMutating: true, ...input }],
  });
}

test('approval spoofing: an escape sequence in a command is shown, not obeyed, by status, follow, result and transcript', async () => {
  const workflowId = `spoof-${tag}-escape`;
  const command = 'touch EVIL_RAN; \x1b[2K\x1b[1Gls -la';
  const answer = 'Done.\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x07 \u202eevil\u202c';
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command }, id: 'toolu_spoof' }]), text(answer)]);
  let result: AgentRunResult | undefined;
  let followed: Awaited<ReturnType<typeof durableAgent>> | undefined;
  await withWorker(env, { model }, async (taskQueue) => {
    const handle = await start(taskQueue, workflowId);
    await waitForState(handle, (s) => s.status === 'awaiting_approval');

    const status = await durableAgent(['status', workflowId]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('approval    toolu_spoof: bash would run with this input:');
    expect(status.stdout).toContain('    │ command: touch EVIL_RAN; ␛[2K␛[1Gls -la');
    expect(status.stdout).not.toMatch(OBEYED);

    const denied = await durableAgent(['deny', workflowId, 'toolu_spoof', '--reason', 'not this']);
    expect(denied.code).toBe(0);
    result = await runResult(handle);
    // Queries replay on a worker: follow the ended run while this one is up.
    followed = await durableAgent(['follow', workflowId]);
  });
  expect(result?.exitReason).toBe('completed');
  expect(existsSync(path.join(workspace, 'EVIL_RAN'))).toBe(false);

  expect(followed?.code).toBe(0);
  expect(followed?.stdout).toContain('⏸ approval needed: bash (tool call toolu_spoof) would run with this input:');
  expect(followed?.stdout).toContain('    │ command: touch EVIL_RAN; ␛[2K␛[1Gls -la');
  expect(followed?.stdout).toContain('Done.␛]52;c;ZXZpbA==␇␛]0;pwned␇ ⟨U+202E⟩evil⟨U+202C⟩');
  expect(followed?.stdout).not.toMatch(OBEYED);

  const shown = await durableAgent(['result', workflowId]);
  expect(shown.stdout).toContain('Done.␛]52;c;ZXZpbA==␇');
  expect(shown.stdout).not.toMatch(OBEYED);
  // --json stays exact: the same answer, character for character, once parsed.
  const json = await durableAgent(['result', workflowId, '--json']);
  expect((JSON.parse(json.stdout) as AgentRunResult).finalText).toBe(answer);
  expect(json.stdout).not.toMatch(OBEYED);

  const transcript = await durableAgent(['transcript', workflowId]);
  expect(transcript.code).toBe(0);
  // A tool call's input is shown as JSON there, which escapes its controls itself.
  expect(transcript.stdout).toContain('touch EVIL_RAN; \\u001b[2K\\u001b[1Gls -la');
  expect(transcript.stdout).toContain('Done.␛]52;c;ZXZpbA==␇␛]0;pwned␇');
  expect(transcript.stdout).not.toMatch(OBEYED);
  const transcriptJson = await durableAgent(['transcript', workflowId, '--json']);
  const messages = (JSON.parse(transcriptJson.stdout) as { messages: { content: unknown }[] }).messages;
  expect(JSON.stringify(messages)).toContain(JSON.stringify(answer).slice(1, -1));
  expect(transcriptJson.stdout).not.toMatch(OBEYED);
});

test('approval spoofing: a command whose tail lies past the recorded preview is shown whole before approval', async () => {
  const workflowId = `spoof-${tag}-tail`;
  const command = `echo ${'a'.repeat(INPUT_PREVIEW_CHARS + 50)}; touch EVIL_RAN`;
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command }, id: 'toolu_tail' }]), text('ok')]);
  let followed: Awaited<ReturnType<typeof durableAgent>> | undefined;
  await withWorker(env, { model }, async (taskQueue) => {
    const handle = await start(taskQueue, workflowId);
    const state = await waitForState(handle, (s) => s.status === 'awaiting_approval');
    // The run's own record of the input is cut: the tail is not in it.
    expect(JSON.stringify(state.pendingApprovals[0]?.input)).not.toContain('EVIL_RAN');

    const status = await durableAgent(['status', workflowId]);
    expect(status.stdout).toContain(`    │ command: ${command}`);
    expect(status.stdout).not.toContain('is cut');

    await durableAgent(['deny', workflowId, 'toolu_tail']);
    await runResult(handle);
    followed = await durableAgent(['follow', workflowId]);
  });
  expect(followed?.stdout).toContain(`    │ command: ${command}`);
  expect(followed?.stdout).not.toContain('is cut');
});

test('approval spoofing: a run id a client chose with escape sequences in it is shown, not obeyed, by list and status', async () => {
  const workflowId = `spoof-${tag}-\x1b]0;pwned\x07\x1b[2K-id`;
  // No worker: the run only has to exist for Temporal to list and describe it.
  const handle = await start(uniqueQueue('nobody'), workflowId);
  try {
    const listed = await eventually(
      () => durableAgent(['list', '--query', `WorkflowId = '${workflowId}'`]),
      (out) => expect(out.stdout).toContain(`spoof-${tag}-␛]0;pwned␇␛[2K-id`),
    );
    expect(listed.stdout).not.toMatch(OBEYED);
    const status = await durableAgent(['status', workflowId]);
    expect(status.stdout).toContain(`run         spoof-${tag}-␛]0;pwned␇␛[2K-id`);
    expect(status.stdout + status.stderr).not.toMatch(OBEYED);
  } finally {
    await handle.terminate('test over');
  }
});
