/**
 * From "what a user hits": the README's `durable-agent worker --workspace-root /srv/agents` failed
 * unless the directory existed. The worker now creates a missing root (mode 0700, with its missing
 * parents) and says so; a root that would be `/` or lie in a system directory is never created.
 */
import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { createMissingRoots, rootProblem } from '../../src/tools/workspace-roots';
import { runCli } from '../support/cli-process';
import { tempWorkspace, testAddress, uniqueQueue } from '../support/temporal';

async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("the README's `worker --workspace-root /srv/agents`: a missing root is created (0700) and the worker starts", async () => {
  const base = await tempWorkspace('root-created');
  const root = path.join(base, 'srv', 'agents');
  const cli = runCli(['worker', '--workspace-root', root], {
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_TASK_QUEUE: uniqueQueue('root-created'),
    ANTHROPIC_API_KEY: '',
    DURABLE_AGENT_WORKSPACE_ROOTS: undefined,
  });
  try {
    await until(() => cli.stdout().includes('Worker polling') || cli.child.exitCode !== null);
    expect(cli.stdout()).toContain(`Created the workspace root ${root} (mode 0700).`);
    expect(cli.stdout()).toContain(`Workspace roots: ${root}`);
    expect(statSync(root).isDirectory()).toBe(true);
    expect(statSync(root).mode & 0o777).toBe(0o700);
  } finally {
    cli.child.kill('SIGTERM');
    await cli.done;
  }
});

test('a root that would be a system directory is not created; the message says what to do', () => {
  expect(createMissingRoots(['/usr/share/no-such-durable-agent-root'])).toEqual([]);
  expect(existsSync('/usr/share/no-such-durable-agent-root')).toBe(false);
  expect(rootProblem('/nonexistent-h2/agents')).toContain('create it (mkdir -p -m 700 /nonexistent-h2/agents)');
});
