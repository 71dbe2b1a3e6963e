/**
 * The worker's workspace rules one by one (the findings "Any client chooses any workspace" and
 * "A planted hook reaches every other run" run whole in workspace-roots.test.ts and
 * planted-hook-reaches-other-runs.test.ts).
 */
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { WorkspacePolicy, WorkspaceRefusedError, rootsFromEnv } from '../../src/tools/workspace-roots';
import { createDefaultRegistry } from '../../src/tools';
import { tempWorkspace } from '../support/temporal';
import { makeContext } from '../tools/helpers';

const repo = path.resolve(__dirname, '..', '..');
const tmp = realpathSync(os.tmpdir());
const policy = (roots: string[], settingsFile = path.join(tmp, 'nowhere', 'settings.json'), env = {}) =>
  new WorkspacePolicy({ roots, settingsFile, env });

async function refusal(p: WorkspacePolicy, workspace: string): Promise<WorkspaceRefusedError> {
  const error = await p.admit(workspace).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WorkspaceRefusedError)) throw new Error(`${workspace} was admitted`);
  return error;
}

test.each(['/', '/usr', '/etc', '/var/lib'])('%s cannot be a workspace root: the worker does not start', (root) => {
  expect(() => policy([root])).toThrow(/cannot be a root/);
});

test('a root that does not exist stops the worker with its name', () => {
  expect(() => policy([path.join(tmp, 'no-such-root-here')])).toThrow(/no-such-root-here does not exist/);
});

test('a shared directory may be a root, but is no workspace itself', async () => {
  const error = await refusal(policy([tmp]), tmp);
  expect(error.rule).toBe('system directory');
  expect(error.message).toContain('shared by the whole machine');
});

test('a workspace holding the worker settings file, even one not created yet, is refused', async () => {
  const home = await tempWorkspace('rules-home');
  const settings = path.join(home, '.durable-agent', 'settings.json');
  const error = await refusal(policy([tmp], settings), home);
  expect(error.rule).toBe("worker's own files");
  expect(error.message).toContain(settings);
  mkdirSync(path.join(home, 'project'));
  await expect(policy([tmp], settings).admit(path.join(home, 'project'))).resolves.toBe(path.join(home, 'project'));
});

test('the worker settings file is checked against the roots: a root holding it is named at start', async () => {
  const home = await tempWorkspace('rules-home-root');
  const settings = path.join(home, '.durable-agent', 'settings.json');
  expect(await policy([home], settings).rootsHoldingOwnFiles()).toEqual([
    `the workspace root ${home} holds the worker's hooks settings file (${settings}): no workspace holding it is accepted`,
  ]);
  expect(await policy([home], path.join(tmp, 'elsewhere', 'settings.json')).rootsHoldingOwnFiles()).toEqual([]);
});

test("a workspace holding the worker's TLS key or Temporal profile is refused", async () => {
  const dir = await tempWorkspace('rules-keys');
  const key = policy([tmp], undefined, { TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key') });
  expect((await refusal(key, dir)).message).toContain("the worker's TLS certificate or key");
  const profile = policy([tmp], undefined, { TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml') });
  expect((await refusal(profile, dir)).message).toContain("the worker's Temporal connection profile");
});

test("the worker's code: its built code and dependencies are refused; a source checkout itself is the developer's project", async () => {
  const p = policy([repo, realpathSync(path.join(repo, 'node_modules'))]);
  const dependency = path.join(repo, 'node_modules', '@temporalio');
  expect((await refusal(p, dependency)).message).toContain("the worker's code is there");
  await expect(p.admit(repo)).resolves.toBe(realpathSync(repo));
});

test('DURABLE_AGENT_WORKSPACE_ROOTS is a path list; empty or unset means the default', () => {
  const list = ['/a', '/b', ''].join(path.delimiter);
  expect(rootsFromEnv({ DURABLE_AGENT_WORKSPACE_ROOTS: list })).toEqual(['/a', '/b']);
  expect(rootsFromEnv({ DURABLE_AGENT_WORKSPACE_ROOTS: ' ' })).toBeUndefined();
  expect(rootsFromEnv({})).toBeUndefined();
});

test('without roots configured, the root is the default workspace (the working directory of the worker)', async () => {
  const here = await tempWorkspace('rules-default');
  const p = new WorkspacePolicy({ defaultRoot: here, settingsFile: path.join(here, 'x', 'settings.json'), env: {} });
  expect(p.roots).toEqual([here]);
  expect((await refusal(p, tmp)).rule).toBe('outside the workspace roots');
});

test('a missing workspace or a file is refused by name', async () => {
  const dir = await tempWorkspace('rules-missing');
  expect((await refusal(policy([tmp]), path.join(dir, 'nope'))).rule).toBe('missing');
  expect((await refusal(policy([repo]), path.join(repo, 'package.json'))).rule).toBe('not a directory');
});

test('a workspace that passed its check is checked again before the next call: moved or replaced, it is refused', async () => {
  const roots = await tempWorkspace('rules-again');
  const w = path.join(roots, 'w');
  mkdirSync(w);
  const elsewhere = await tempWorkspace('rules-again-target');
  const p = policy([roots]);
  await expect(p.verify(w)).resolves.toBe(w);
  // The second check skips the rules its real path already passed, not the real path or the stat.
  await expect(p.verify(w)).resolves.toBe(w);
  renameSync(w, path.join(roots, 'old'));
  symlinkSync(elsewhere, w);
  await expect(p.verify(w)).rejects.toMatchObject({ rule: 'moved' });
  rmSync(w);
  writeFileSync(w, 'now a file');
  await expect(p.verify(w)).rejects.toMatchObject({ rule: 'not a directory' });
});

test("a real path that passed is no pass for a link to it: the rules on the link's own path still run", async () => {
  const roots = await tempWorkspace('rules-link');
  const w = path.join(roots, 'w');
  mkdirSync(w);
  const elsewhere = await tempWorkspace('rules-link-settings');
  writeFileSync(path.join(elsewhere, 'settings.json'), '{}');
  // The worker's settings file, as configured, lies under the link; it resolves outside both.
  symlinkSync(path.join(elsewhere, 'settings.json'), path.join(w, 'settings.json'));
  const link = path.join(roots, 'link');
  symlinkSync(w, link);
  const p = policy([roots], path.join(link, 'settings.json'));
  await expect(p.verify(w)).resolves.toBe(w);
  expect((await refusal(p, link)).rule).toBe("worker's own files");
});

test('nested workspaces redirect each other: a swap after the check before a call is caught by the tools themselves', async () => {
  const roots = await tempWorkspace('rules-pin');
  const b = path.join(roots, 'a', 'sub');
  mkdirSync(b, { recursive: true });
  const target = await tempWorkspace('rules-pin-target');
  writeFileSync(path.join(target, 'secret'), 'private');
  const p = policy([roots]);
  await expect(p.verify(b)).resolves.toBe(b); // the check before the call: b is still itself
  renameSync(b, path.join(roots, 'a', 'old'));
  symlinkSync(target, b); // ... and is swapped right after it
  const registry = createDefaultRegistry();
  for (const [name, input] of [
    ['read_file', { path: 'secret' }],
    ['write_file', { path: 'planted', content: 'x' }],
    ['glob', { pattern: '*' }],
    ['bash', { command: 'cat secret; touch planted-by-bash' }],
  ] as const) {
    const result = await registry.run(name, input, makeContext(b));
    expect({ name, result }).toEqual({ name, result: expect.objectContaining({ isError: true }) });
    expect(JSON.stringify(result)).toContain(`now resolves to ${target}`);
    expect(JSON.stringify(result)).not.toContain('private');
  }
  expect(existsSync(path.join(target, 'planted'))).toBe(false);
  expect(existsSync(path.join(target, 'planted-by-bash'))).toBe(false);
});
