import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { baseActivityName } from '../../src/shared/activity-names';
import { denyToolUpdate } from '../../src/shared';
import { toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

// PreToolUse / PostToolUse hooks for `task` itself: a worker with a settings file, real command hooks.
const { suite, start } = useWorkflowSuite('subagent-hooks');

let settingsFile = '';
beforeEach(() => {
  settingsFile = path.join(os.tmpdir(), `durable-agent-task-hooks-${Date.now()}-${Math.random()}.json`);
});
afterEach(() => rmSync(settingsFile, { force: true }));

const writeSettings = (hooks: Record<string, unknown[]>) => writeFileSync(settingsFile, JSON.stringify({ hooks }));
const command = (matcher: string, cmd: string) => ({ matcher, hooks: [{ type: 'command', command: cmd }] });

async function activityTypes(workflowId: string): Promise<string[]> {
  const history = await suite.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [baseActivityName(name)] : [];
  });
}

test('a PreToolUse hook that denies task: no subagent starts and the model reads why', async () => {
  writeSettings({ PreToolUse: [command('task', 'echo "no delegation today" >&2; exit 2')] });
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: do it' } }]),
    text('Did it myself.'),
  ]);
  const child = new ScriptedModel([text('never')]);
  await withWorker(
    suite.env,
    { model: new RoutedModel({ work: parent, child }), deps: { settingsFile } },
    async (tq) => {
      const handle = await start(tq, { tools: ['read_file', 'task'] });
      expect((await handle.result()).exitReason).toBe('completed');
      const [block] = toolResults(parent.requests[1]!.messages[2]);
      expect(block!.is_error).toBe(true);
      expect(block!.content).toContain('no delegation today');
      await expect(suite.env.client.workflow.getHandle(`${handle.workflowId}.task-1`).describe()).rejects.toThrow();
      expect((await activityTypes(handle.workflowId)).filter((n) => n === 'runHook')).toHaveLength(1);
    },
  );
  expect(child.requests).toHaveLength(0);
});

test("a PreToolUse hook's rewritten input is what the subagent gets, and PostToolUse sees its answer", async () => {
  const seen = path.join(suite.workspace, '..', `post-${Date.now()}.json`);
  const rewrite = {
    hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { prompt: 'child rewritten: count' } },
  };
  writeSettings({
    PreToolUse: [command('task', `echo '${JSON.stringify(rewrite)}'`)],
    PostToolUse: [command('task', `cat > ${seen}; echo "check the count twice" >&2; exit 2`)],
  });
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child original: count' } }]),
    text('Counted.'),
  ]);
  const rewritten = new ScriptedModel([text('there are 3')]);
  const original = new ScriptedModel([text('never')]);
  const model = new RoutedModel({ work: parent, 'child rewritten': rewritten, 'child original': original });
  await withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const handle = await start(tq, { tools: ['read_file', 'task'] });
    expect((await handle.result()).exitReason).toBe('completed');
    const [block] = toolResults(parent.requests[1]!.messages[2]);
    expect(block!.is_error === true).toBe(false);
    expect(block!.content).toContain('there are 3');
    expect(block!.content).toContain('[hook feedback] check the count twice');
  });
  expect(original.requests).toHaveLength(0);
  expect(rewritten.requests[0]!.messages[0]!.content).toBe('child rewritten: count');
  const post = JSON.parse(readFileSync(seen, 'utf8'));
  expect(post.tool_name).toBe('task');
  expect(post.tool_input).toEqual({ prompt: 'child rewritten: count' });
  expect(JSON.stringify(post.tool_response)).toContain('there are 3');
  rmSync(seen, { force: true });
});

test("permissions.task 'ask' waits for an operator before a subagent starts; a denial starts none", async () => {
  const parent = new ScriptedModel([
    toolUse([{ id: 'p1', name: 'task', input: { prompt: 'child: delegate' } }]),
    text('Fine, not delegated.'),
  ]);
  const child = new ScriptedModel([text('never')]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['read_file', 'task'], permissions: { task: 'ask' } });
    const waiting = await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    expect(waiting.pendingApprovals[0]).toMatchObject({ toolUseId: 'p1', name: 'task' });
    expect(waiting.subagents ?? []).toEqual([]);
    await handle.executeUpdate(denyToolUpdate, { args: [{ toolUseId: 'p1', reason: 'not now' }] });
    expect((await handle.result()).exitReason).toBe('completed');
    const [block] = toolResults(parent.requests[1]!.messages[2]);
    expect(block!.is_error).toBe(true);
    expect(block!.content).toContain('the operator denied this task call: not now');
    await expect(suite.env.client.workflow.getHandle(`${handle.workflowId}.task-1`).describe()).rejects.toThrow();
  });
  expect(child.requests).toHaveLength(0);
});
