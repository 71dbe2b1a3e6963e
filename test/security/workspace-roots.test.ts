/**
 * Findings (high): "Any client chooses any workspace" (`workspace: "/"` let the file tools read
 * /etc/shadow; `"/usr"` let the sandboxed bash write the host's /usr) and "Nested workspaces
 * redirect each other" (run A replaced its subfolder with a symlink to /root; run B, configured
 * with that subfolder, then read, wrote and bash-bound /root). A workspace is now the operator's
 * decision: admitted once at run start inside the worker's roots, recorded as its real path, and
 * checked again before every tool call.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { ErrorTypes, endSessionUpdate, sendMessageUpdate, stateQuery } from '../../src/shared';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { durableAgent } from '../cli/cli-helpers';
import { uniqueQueue } from '../support/temporal';
import { outcomeOf } from './workspace-helpers';

jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('roots');

test.each(['/', '/usr', '/etc'])(
  'any client chooses any workspace: %s is refused at run start, naming the rule and the roots',
  async (workspace) => {
    const roots = await tempWorkspace('roots-root');
    const model = new ScriptedModel([toolUse([{ name: 'read_file', input: { path: '/etc/shadow' } }]), text('x')]);
    await withWorker(suite.env, { model, deps: { workspaceRoots: [roots] } }, async (tq) => {
      const end = await outcomeOf(await start(tq, { workspace }));
      expect(end.failed).toBe(true);
      expect(end.result?.error?.type).toBe(ErrorTypes.WorkspaceRefused);
      expect(end.message).toContain('(outside the workspace roots)');
      expect(end.message).toContain(`workspace roots: ${roots}`);
    });
    expect(model.requests).toHaveLength(0);
  },
);

test('any client chooses any workspace: a folder that resolves through a symlink outside the roots is refused', async () => {
  const roots = await tempWorkspace('roots-root');
  const outside = await tempWorkspace('roots-outside');
  symlinkSync(outside, path.join(roots, 'link'));
  const model = new ScriptedModel([text('x')]);
  await withWorker(suite.env, { model, deps: { workspaceRoots: [roots] } }, async (tq) => {
    const end = await outcomeOf(await start(tq, { workspace: path.join(roots, 'link') }));
    expect(end.result?.error?.type).toBe(ErrorTypes.WorkspaceRefused);
    expect(end.message).toContain(`it resolves to ${outside}`);
  });
  expect(model.requests).toHaveLength(0);
});

test('a workspace inside the roots runs, and its tools work in its real path', async () => {
  const roots = await tempWorkspace('roots-root');
  mkdirSync(path.join(roots, 'project'));
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'pwd; touch made' } }]), text('ok')]);
  await withWorker(suite.env, { model, deps: { workspaceRoots: [roots] } }, async (tq) => {
    expect((await outcomeOf(await start(tq, { workspace: path.join(roots, 'project') }))).result?.exitReason).toBe(
      'completed',
    );
  });
  expect(existsSync(path.join(roots, 'project', 'made'))).toBe(true);
  expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain(path.join(roots, 'project'));
});

test('nested workspaces redirect each other: run B keeps its recorded workspace after run A swaps it for a symlink', async () => {
  const roots = await tempWorkspace('nested-root');
  const a = path.join(roots, 'a');
  const b = path.join(a, 'sub');
  mkdirSync(b, { recursive: true });
  // Stands for /root in the finding: a directory outside the roots holding something private.
  const target = await tempWorkspace('nested-target');
  writeFileSync(path.join(target, 'secret'), 'private');
  const model = new ScriptedModel([
    text('B is ready'), // run B, first turn
    toolUse([{ name: 'bash', input: { command: `rm -rf sub && ln -s ${target} sub && ls -la` } }]), // run A
    text('A swapped it'),
    toolUse([
      { name: 'read_file', input: { path: 'secret' } },
      { name: 'write_file', input: { path: 'planted', content: 'x' } },
      { name: 'bash', input: { command: 'cat secret; touch planted-by-bash' } },
    ]), // run B, second turn
    text('B done'),
  ]);
  await withWorker(suite.env, { model, deps: { workspaceRoots: [roots] } }, async (tq) => {
    const runB = await start(tq, { workspace: b, session: true });
    await waitFor(async () => (await runB.query(stateQuery)).status === 'awaiting_input');
    const runA = await start(tq, { workspace: a });
    expect((await outcomeOf(runA)).result?.exitReason).toBe('completed');
    expect(existsSync(path.join(b, 'secret'))).toBe(true); // the swap happened: b now leads to the target
    await runB.executeUpdate(sendMessageUpdate, { args: [{ message: 'go on' }] });
    await waitFor(async () => (await runB.query(stateQuery)).status === 'awaiting_input');
    await runB.executeUpdate(endSessionUpdate, { args: [{}] });
    expect((await outcomeOf(runB)).result?.exitReason).toBe('completed');
  });
  const results = JSON.stringify(model.requests[4]?.messages.at(-1));
  expect(results.match(/"is_error":true/g)).toHaveLength(3);
  expect(results).toContain(`now resolves to ${target}`);
  expect(results).not.toContain('private');
  expect(existsSync(path.join(target, 'planted'))).toBe(false);
  expect(existsSync(path.join(target, 'planted-by-bash'))).toBe(false);
});

test('any client chooses any workspace: the CLI with its inline worker refuses --workspace / at run start', async () => {
  const here = await tempWorkspace('roots-cli');
  const out = await durableAgent(['run', 'read /etc/shadow', '--workspace', '/', '--json'], {
    taskQueue: uniqueQueue('roots-cli'),
    env: { DURABLE_AGENT_WORKSPACE_ROOTS: here },
  });
  expect(out.code).toBe(1);
  const result = JSON.parse(out.stdout) as { exitReason: string; error?: { type: string; message: string } };
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe('DurableAgent.WorkspaceRefused');
  expect(result.error?.message).toContain('The workspace / is refused (outside the workspace roots)');
  expect(result.error?.message).toContain(`workspace roots: ${here}`);
  expect(out.stderr).toContain('The workspace / is refused');
});

test('a worker whose --workspace-root is / or a system directory does not start (exit 2, saying why)', async () => {
  for (const root of ['/', '/usr']) {
    const out = await durableAgent(['worker', '--workspace-root', root], { taskQueue: uniqueQueue('roots-worker') });
    expect(out.code).toBe(2);
    expect(out.stdout + out.stderr).toContain(`The workspace root ${root} cannot be a root`);
  }
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}
