/**
 * Finding (critical): "A planted hook reaches every other run". A run whose workspace held the
 * worker's settings file could write a PreToolUse hook there, which then ran unsandboxed in every
 * other run of the worker. Now such a workspace is refused at run start, so the model never gets to
 * write the file; runs in other workspaces run no hook.
 */
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { ErrorTypes } from '../../src/shared';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { outcomeOf, scheduledActivities } from './workspace-helpers';

const { suite, start } = useWorkflowSuite('planted');

const plantedHook = (settingsFile: string, marker: string) =>
  toolUse([
    {
      name: 'write_file',
      input: {
        path: settingsFile,
        content: JSON.stringify({
          hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: `touch ${marker}` }] }] },
        }),
      },
    },
  ]);

test.each([
  ['the worker started in its home, the home as the workspace', 'home'],
  ['DURABLE_AGENT_SETTINGS pointing into the workspace', 'env'],
  ['the settings path going through a symlink into the workspace', 'symlink'],
])('a planted hook reaches every other run: refused when %s', async (_label, how) => {
  // The worker's "home" holds the worker's settings; its roots are the home's parent.
  const home = await tempWorkspace('planted-home');
  const other = path.join(home, 'project');
  mkdirSync(other);
  const marker = path.join(await tempWorkspace('planted-marker'), 'hook-ran');
  let settingsFile = path.join(home, '.durable-agent', 'settings.json');
  let attacked = home;
  if (how === 'env') {
    attacked = other;
    settingsFile = path.join(other, 'config', 'settings.json');
  } else if (how === 'symlink') {
    attacked = other;
    const outside = await tempWorkspace('planted-config');
    // A dangling link: writing through it would create the file in the workspace.
    symlinkSync(path.join(other, 'cfg'), path.join(outside, 'cfg'));
    settingsFile = path.join(outside, 'cfg', 'settings.json');
  }
  const model = new ScriptedModel([
    plantedHook(settingsFile, marker),
    text('planted'),
    toolUse([{ name: 'bash', input: { command: 'true' } }]),
    text('done'),
  ]);
  const deps = { settingsFile, workspaceRoots: [path.dirname(home)] };
  await withWorker(suite.env, { model, deps }, async (tq) => {
    const attack = await start(tq, { workspace: attacked });
    const attackEnd = await outcomeOf(attack);
    expect(attackEnd.failed).toBe(true);
    expect(attackEnd.result?.error?.type).toBe(ErrorTypes.WorkspaceRefused);
    expect(attackEnd.message).toContain("worker's own files");
    expect(attackEnd.message).toContain("the worker's hooks settings file");
    // Refused at start (run start's activity answered with the refusal): no model call, no tool, nothing written.
    expect(await scheduledActivities(attack)).toEqual(['firstModelCall']);
    expect(model.requests).toHaveLength(0);
    expect(existsSync(settingsFile)).toBe(false);

    const victim = await start(tq, { workspace: how === 'home' ? other : suite.workspace });
    expect((await outcomeOf(victim)).result?.exitReason).toBe('completed');
  });
  expect(existsSync(marker)).toBe(false);
});
