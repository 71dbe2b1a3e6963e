/**
 * Finding (medium): "nested-workspace redirect before start". Run A (workspace …/nest) replaced its
 * folder `sub` by a symlink to ../victim before run B (workspace …/nest/sub) started: B then worked
 * in victim. A workspace given as a path is now resolved once, at run start, and refused when a
 * symbolic link on its way lies in a root (where a run could have made it), unless the operator lets
 * the worker follow such links (DURABLE_AGENT_WORKSPACE_LINKS=1).
 */
import { existsSync, lstatSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { ErrorTypes } from '../../src/shared';
import { WorkspacePolicy, WorkspaceRefusedError } from '../../src/tools/workspace-roots';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { outcomeOf } from './workspace-helpers';

const { suite, start } = useWorkflowSuite('nest-before');

test('nested-workspace redirect before start: run B, whose folder run A made a link, is refused and never works in the victim', async () => {
  const roots = await tempWorkspace('nest-before-root');
  const nest = path.join(roots, 'nest');
  const sub = path.join(nest, 'sub');
  const victim = path.join(roots, 'victim');
  mkdirSync(sub, { recursive: true });
  mkdirSync(victim);
  writeFileSync(path.join(victim, 'secret'), 'victim-private');
  const a = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'rm -rf sub && ln -s ../victim sub' } }]),
    text('A swapped sub'),
  ]);
  const b = new ScriptedModel([
    toolUse([
      { name: 'read_file', input: { path: 'secret' } },
      { name: 'write_file', input: { path: 'planted', content: 'x' } },
    ]),
    text('B done'),
  ]);
  await withWorker(suite.env, { model: a, deps: { workspaceRoots: [roots] } }, async (tq) => {
    expect((await outcomeOf(await start(tq, { workspace: nest }))).result?.exitReason).toBe('completed');
  });
  expect(lstatSync(sub).isSymbolicLink()).toBe(true); // the swap happened before B started
  await withWorker(suite.env, { model: b, deps: { workspaceRoots: [roots] } }, async (tq) => {
    const end = await outcomeOf(await start(tq, { workspace: sub }));
    expect(end.result?.error?.type).toBe(ErrorTypes.WorkspaceRefused);
    expect(end.message).toContain(`The workspace ${sub} is refused (symlink in its path)`);
    expect(end.message).toContain(`${sub} is a symbolic link in the workspace root ${roots}`);
    expect(end.message).toContain('DURABLE_AGENT_WORKSPACE_LINKS=1');
  });
  expect(b.requests).toHaveLength(0);
  expect(existsSync(path.join(victim, 'planted'))).toBe(false);
});

test('links in a root are followed when the operator allows it (at their real path, pinned); links above the roots always', async () => {
  const base = await tempWorkspace('nest-before-links');
  const real = path.join(base, 'real-root');
  mkdirSync(path.join(real, 'project', 'deep'), { recursive: true });
  // The root itself reached through a link (as /tmp is on macOS): the machine's link, not a run's.
  symlinkSync(real, path.join(base, 'root-link'));
  symlinkSync(path.join(real, 'project'), path.join(real, 'alias'));
  const policy = (allowLinks?: boolean) =>
    new WorkspacePolicy({
      roots: [path.join(base, 'root-link')],
      settingsFile: path.join(base, 'none', 'settings.json'),
      env: {},
      ...(allowLinks !== undefined ? { allowLinks } : {}),
    });
  const project = realpathSync(path.join(real, 'project'));
  await expect(policy().admit(path.join(base, 'root-link', 'project', 'deep'))).resolves.toBe(
    path.join(project, 'deep'),
  );
  const refused = await policy()
    .admit(path.join(real, 'alias', 'deep'))
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(WorkspaceRefusedError);
  expect((refused as WorkspaceRefusedError).rule).toBe('symlink in its path');
  await expect(policy(true).admit(path.join(real, 'alias', 'deep'))).resolves.toBe(path.join(project, 'deep'));
  const fromEnv = new WorkspacePolicy({
    roots: [real],
    settingsFile: path.join(base, 'none', 'settings.json'),
    env: { DURABLE_AGENT_WORKSPACE_LINKS: '1' },
  });
  await expect(fromEnv.admit(path.join(real, 'alias'))).resolves.toBe(project);
  expect(
    () => new WorkspacePolicy({ roots: [real], settingsFile: 'x', env: { DURABLE_AGENT_WORKSPACE_LINKS: 'maybe' } }),
  ).toThrow(/DURABLE_AGENT_WORKSPACE_LINKS must be 1, true, on or yes/);
});
