/**
 * Finding (high, review of issue 44's fix): the worker's HOME inside a root lets a run plant code
 * that operator servers load. `cd ~ && durable-agent worker` makes HOME a root; a workspace in
 * `~/.npm` (npx's cache), `~/.local/lib/python3.X/site-packages` (Python's user site),
 * `~/.cache/uv` or `~/.node_modules` (node's global folder) would let a run plant what an operator
 * MCP server (or a worker hook) runs next. Those folders are the operator's: refused as workspaces.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { WorkspacePolicy, WorkspaceRefusedError } from '../../src/tools/workspace-roots';
import { tempWorkspace } from '../support/temporal';

test.each([
  ['.npm', '.npm/_npx/abc'],
  ['.local', '.local/lib/python3.11/site-packages'],
  ['.cache', '.cache/uv'],
  ['.node_modules', '.node_modules'],
  ['.config', '.config/pip'],
  ['.nvm', '.nvm/versions'],
])(
  "with HOME a root, a workspace in the worker's ~/%s (%s) is refused; a project beside is not",
  async (folder, sub) => {
    const home = realpathSync(await tempWorkspace('home-root'));
    const policy = new WorkspacePolicy({
      roots: [home],
      settingsFile: path.join(home, '.durable-agent', 'settings.json'),
      env: { HOME: home },
    });
    const workspace = path.join(home, sub);
    mkdirSync(workspace, { recursive: true });
    const error = await policy.admit(workspace).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkspaceRefusedError);
    expect((error as WorkspaceRefusedError).rule).toBe("worker's own files");
    expect((error as WorkspaceRefusedError).message).toContain(`the worker's ~/${folder} (`);
    expect((error as WorkspaceRefusedError).message).toContain('; HOME)');
    mkdirSync(path.join(home, 'project'));
    await expect(policy.admit(path.join(home, 'project'))).resolves.toBe(path.join(home, 'project'));
  },
);
