import { existsSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { baseActivityName } from '../../src/shared/activity-names';

// Hooks in real runs: a worker with a settings file, the scripted model, the real bash tool.
const { suite, start } = useWorkflowSuite('hooks');

let settingsFile = '';
beforeEach(() => {
  settingsFile = path.join(os.tmpdir(), `durable-agent-hooks-${Date.now()}-${Math.random()}.json`);
});
afterEach(() => rmSync(settingsFile, { force: true }));

function writeSettings(hooks: Record<string, unknown[]>): void {
  writeFileSync(settingsFile, JSON.stringify({ hooks }));
}

async function scheduled(workflowId: string): Promise<string[]> {
  const history = await suite.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => baseActivityName(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
    .filter((n): n is string => !!n);
}

test('a PreToolUse hook exiting 2 denies the call: the model reads stderr, the command never runs, one hook activity', async () => {
  const marker = path.join(suite.workspace, 'ran');
  writeSettings({
    PreToolUse: [
      { matcher: 'bash', hooks: [{ type: 'command', command: 'echo "touching is forbidden" >&2; exit 2' }] },
    ],
  });
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: `touch ${marker}` } }]), text('ok')]);
  const handle = await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const h = await start(tq);
    expect((await h.result()).exitReason).toBe('completed');
    return h;
  });
  expect(existsSync(marker)).toBe(false);
  const toolResult = JSON.stringify(model.requests[1]?.messages.at(-1));
  expect(toolResult).toContain('"is_error":true');
  expect(toolResult).toContain('touching is forbidden');
  expect((await scheduled(handle.workflowId)).filter((n) => n === 'runHook')).toHaveLength(1);
  expect(await scheduled(handle.workflowId)).not.toContain('runTool');
});

test('a PreToolUse hook rewriting the input: the rewritten command is what runs', async () => {
  const answer = { hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 'touch rewritten' } } };
  writeSettings({
    PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: `echo '${JSON.stringify(answer)}'` }] }],
  });
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'touch original' } }]), text('ok')]);
  await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    expect((await (await start(tq)).result()).exitReason).toBe('completed');
  });
  expect(existsSync(path.join(suite.workspace, 'rewritten'))).toBe(true);
  expect(existsSync(path.join(suite.workspace, 'original'))).toBe(false);
});

test('a Stop hook blocking once: the model gets the reason and goes on; a run without hooks schedules none', async () => {
  writeSettings({
    Stop: [
      {
        hooks: [
          {
            type: 'command',
            command:
              'if grep -q \'"stop_hook_active":true\'; then exit 0; fi; echo \'{"decision":"block","reason":"run the tests"}\'',
          },
        ],
      },
    ],
  });
  const model = new ScriptedModel([text('done'), text('tests pass')]);
  const handle = await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const h = await start(tq);
    const result = await h.result();
    expect(result.exitReason).toBe('completed');
    expect(result.finalText).toBe('tests pass');
    return h;
  });
  expect(JSON.stringify(model.requests[1]?.messages.at(-1))).toContain('run the tests');
  expect((await scheduled(handle.workflowId)).filter((n) => n === 'runHook')).toHaveLength(2);

  const plain = new ScriptedModel([text('done')]);
  const missing = path.join(os.tmpdir(), `durable-agent-no-settings-${Date.now()}.json`);
  const other = await withWorker(suite.env, { model: plain, deps: { settingsFile: missing } }, async (tq) => {
    const h = await start(tq);
    await h.result();
    return h;
  });
  expect(await scheduled(other.workflowId)).not.toContain('runHook');
});
