import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectoryStore } from '../../src/checkpoints';
import { diffCommand } from '../../src/cli/checkpoints/diff-command';
import { readRunHistory } from '../../src/client/checkpoints/run-history';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { AgentRun } from '../../src/plugin/agent-run';
import { FORKED_FROM_MEMO } from '../../src/shared/fork';
import type { Message } from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { durableAgent } from './cli-helpers';

/**
 * `diff` and `fork` (docs/checkpoints.md) on real runs: a real server, a real worker recording into a
 * directory store, the scripted model. Each run is read from history (no query) by the CLI as built.
 */
jest.setTimeout(240_000);

const { suite, start } = useWorkflowSuite('ckpt-cli');

let storeDir: string;
beforeEach(async () => {
  storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckptc-store-'));
});
afterEach(async () => {
  await fs.rm(storeDir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  durableAgent(args, { env: { DURABLE_AGENT_CHECKPOINTS: storeDir, ...env } });

/** Turn 1 writes a.txt, turn 2 only reads, turn 3 edits a.txt and writes a binary file, turn 4 answers. */
const ORIGINAL = () => [
  toolUse([{ name: 'write_file', input: { path: 'a.txt', content: 'one\ntwo\nthree\n' } }]),
  toolUse([{ name: 'read_file', input: { path: 'a.txt' } }]),
  toolUse([
    { name: 'edit_file', input: { path: 'a.txt', old_string: 'two', new_string: 'TWO' } },
    { name: 'bash', input: { command: "printf 'x\\000y' > bin.dat" } },
  ]),
  text('Done.'),
];

test('diff shows each turn as a unified diff, binary files as such; hostile turns and ids are refused', async () => {
  await fs.writeFile(path.join(suite.workspace, 'seed.txt'), 'seed\n');
  const model = new ScriptedModel(ORIGINAL());
  const id = await withWorker(suite.env, { model, deps: { checkpoints: new DirectoryStore(storeDir) } }, async (tq) => {
    const handle = await start(tq);
    expect((await runResult(handle)).exitReason).toBe('completed');
    return handle.workflowId;
  });

  const turn1 = await cli(['diff', id, '--turn', '1']);
  expect(turn1.stderr).toBe('');
  expect(turn1.code).toBe(0);
  expect(turn1.stdout).toContain(
    'diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,3 @@\n+one\n+two\n+three\n',
  );

  const turn3 = await cli(['diff', id, '--turn', '3']);
  expect(turn3.code).toBe(0);
  expect(turn3.stdout).toContain('--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n');
  expect(turn3.stdout).toContain('Binary files /dev/null and b/bin.dat differ');

  expect((await cli(['diff', id, '--turn', '2'])).stdout).toBe('No files changed between turn 1 and turn 2.\n');

  const stat = await cli(['diff', id, '--stat']);
  expect(stat.stdout).toBe('A  a.txt\nA  bin.dat\n2 change(s)\n');
  const json = JSON.parse((await cli(['diff', id, '--from', '1', '--to', '3', '--json'])).stdout);
  expect(json.files).toEqual([
    { path: 'a.txt', status: 'modified', added: 1, removed: 1, oldMode: 0o644, newMode: 0o644 },
    { path: 'bin.dat', status: 'added', binary: true, newMode: expect.any(Number) },
  ]);
  expect(json.from.turn).toBe(1);
  expect(json.to.checkpointId).toMatch(/^[0-9a-f]{64}$/);

  // Hostile input: each refused with what is accepted.
  const abc = await cli(['diff', id, '--turn', 'abc']);
  expect(abc.code).toBe(2);
  expect(abc.stderr).toContain('--turn must be a whole number');
  const negative = await cli(['diff', id, '--turn=-1']);
  expect(negative.code).toBe(2);
  expect(negative.stderr).toContain('--turn must be at least 0');
  const huge = await cli(['diff', id, '--turn', '1e9']);
  expect(huge.code).toBe(2);
  expect(huge.stderr).toContain('the run has turns 0 to 4');
  const none = await cli(['diff', 'no-such-run-ckptc', '--turn', '1']);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain('no such run');
  const off = await cli(['diff', id], { DURABLE_AGENT_CHECKPOINTS: 'off' });
  expect(off.code).toBe(1);
  expect(off.stderr).toContain('DURABLE_AGENT_CHECKPOINTS is off here');
});

test('fork at turn N: a new run with the first N turns and turn N files, the original untouched; memo, status and list show the origin', async () => {
  const model = new ScriptedModel([
    ...ORIGINAL(),
    // The fork's own turns: it reads a.txt as turn 1 left it, then answers.
    toolUse([{ name: 'read_file', input: { path: 'a.txt' } }]),
    text('Forked and done.'),
  ]);
  const store = new DirectoryStore(storeDir);
  await withWorker(suite.env, { model, deps: { checkpoints: store } }, async (tq) => {
    const handle = await start(tq);
    expect((await runResult(handle)).exitReason).toBe('completed');
    const originalFiles = (await fs.readdir(suite.workspace)).sort();

    const fork = await AgentRun.fork(suite.env.client, handle.workflowId, {
      atTurn: 1,
      prompt: 'Now read it back.',
      taskQueue: tq,
    });
    const result = await fork.result();
    expect(result.error).toBeUndefined();
    expect(result.exitReason).toBe('completed');
    expect(result.finalText).toBe('Forked and done.');

    // The fork's first request: the original's first turn (prompt, answer, tool result) and the new message.
    const first = model.requests[4]!.messages;
    expect(first.slice(0, 2)).toEqual(model.requests[1]!.messages.slice(0, 2));
    const last = first.at(-1) as Message;
    expect(last.role).toBe('user');
    expect(JSON.stringify(last.content)).toContain('Now read it back.');
    expect(JSON.stringify(last.content)).toContain('tool_result');
    // It read a.txt as turn 1 left it, not turn 3's edit.
    expect(JSON.stringify(model.requests[5]!.messages.at(-1))).toContain('two');
    expect(JSON.stringify(model.requests[5]!.messages.at(-1))).not.toContain('TWO');

    const description = await fork.handle.describe();
    expect(description.memo?.[FORKED_FROM_MEMO]).toEqual({
      workflowId: handle.workflowId,
      runId: handle.firstExecutionRunId,
      turn: 1,
    });
    const forkWorkspace = path.join(path.dirname(await fs.realpath(suite.workspace)), fork.workflowId);
    expect((await fs.readdir(forkWorkspace)).sort()).toEqual(['a.txt']);
    expect(await fs.readFile(path.join(forkWorkspace, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    // The original's workspace is as it was.
    expect((await fs.readdir(suite.workspace)).sort()).toEqual(originalFiles);
    expect(await fs.readFile(path.join(suite.workspace, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');

    const status = await cli(['status', fork.workflowId]);
    expect(status.stdout).toContain(`forked from ${handle.workflowId} at turn 1`);
    const listed = await cli(['list', '--json', '--query', `DurableAgentForkedFrom = '${handle.workflowId}'`]);
    expect(JSON.parse(listed.stdout).map((r: { workflowId: string }) => r.workflowId)).toEqual([fork.workflowId]);

    // The fork's own history reads as its inherited turn plus its own.
    const history = await readRunHistory(suite.env.client, fork.workflowId);
    expect(history.lastTurn).toBe(2);
    let out = '';
    const write = (t: string) => void (out += t);
    expect(await diffCommand(suite.env.client, fork.workflowId, { stat: true, json: false }, write, store)).toBe(0);
    expect(out).toBe('No files changed between turn 0 and turn 2.\n');
    await fs.rm(forkWorkspace, { recursive: true, force: true });
  });
});

test('fork refuses hostile turns, unknown runs and runs without checkpoints, naming the turns that can be forked', async () => {
  const model = new ScriptedModel([...ORIGINAL(), ...ORIGINAL()]);
  const { withStore, without } = await withWorker(
    suite.env,
    { model, deps: { checkpoints: new DirectoryStore(storeDir) } },
    async (tq) => {
      const a = await start(tq);
      await runResult(a);
      return { withStore: a.workflowId };
    },
  ).then(async (ids) => {
    const off = await withWorker(suite.env, { model, deps: { checkpoints: false } }, async (tq) => {
      const b = await start(tq);
      await runResult(b);
      return b.workflowId;
    });
    return { ...ids, without: off };
  });
  const negative = await cli(['fork', withStore, '--at-turn=-1', '--detach']);
  expect(negative.code).toBe(2);
  expect(negative.stderr).toContain('--at-turn must be at least 0');
  const abc = await cli(['fork', withStore, '--at-turn', 'abc', '--detach']);
  expect(abc.code).toBe(2);
  expect(abc.stderr).toContain('--at-turn must be a whole number');
  const huge = await cli(['fork', withStore, '--at-turn', '1e9', '--detach']);
  expect(huge.code).toBe(1);
  expect(huge.stderr).toContain('has turns 0 to 4, not 1000000000. Turns that can be forked: 0-4.');
  const missing = await cli(['fork', withStore]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('--at-turn N');
  const unknown = await cli(['fork', 'no-such-run-ckptc', '--at-turn', '1', '--detach']);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('no such run');
  const off = await cli(['fork', without, '--at-turn', '1', '--detach']);
  expect(off.code).toBe(1);
  expect(off.stderr).toContain('cannot be forked: the run recorded no checkpoint');
  expect(off.stderr).toContain('Turns that can be forked: none.');
  const answered = await cli(['fork', withStore, '--at-turn', '4', '--detach']);
  expect(answered.code).toBe(1);
  expect(answered.stderr).toContain("turn 4 ended with the model's answer: give the fork's next message with --prompt");
});
