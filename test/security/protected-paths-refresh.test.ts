/**
 * The worker's protected paths (settings file, keys, profile) are resolved at most once a second
 * and shared by the checks meanwhile (they were resolved before every tool call); a re-link by the
 * worker's user is still seen within that second.
 */
import { mkdirSync, realpathSync, renameSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROTECTED_PATHS_TTL_MS, WorkspacePolicy, WorkspaceRefusedError } from '../../src/tools/workspace-roots';
import { tempWorkspace } from '../support/temporal';

const tmp = realpathSync(os.tmpdir());

test('a protected path re-linked into an admitted workspace refuses it within the refresh period', async () => {
  const home = await tempWorkspace('protected-refresh');
  const workspace = path.join(home, 'project');
  const conf = path.join(home, 'conf');
  mkdirSync(workspace);
  mkdirSync(conf);
  const policy = new WorkspacePolicy({ roots: [tmp], settingsFile: path.join(conf, 'settings.json'), env: {} });
  await expect(policy.verify(await policy.admit(workspace))).resolves.toBe(workspace);

  // The worker's user moves its settings folder into the workspace, leaving a link behind.
  renameSync(conf, path.join(workspace, 'conf'));
  symlinkSync(path.join(workspace, 'conf'), conf);
  await new Promise((resolve) => setTimeout(resolve, PROTECTED_PATHS_TTL_MS + 100));

  const error = await policy.verify(workspace).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkspaceRefusedError);
  expect((error as WorkspaceRefusedError).rule).toBe("worker's own files");
});
