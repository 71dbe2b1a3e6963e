import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../support/cli-process';
import { tempWorkspace, testAddress, uniqueQueue } from '../support/temporal';

/**
 * The README's `npx durable-agent worker --workspace-root /srv/agents` on a fresh machine (issue 44):
 * the root does not exist yet, and the worker makes it (mode 0700) and polls, instead of refusing to
 * start. The built CLI, as a user runs it.
 */
test('worker --workspace-root DIR with a missing DIR creates it and polls; SIGTERM stops it cleanly', async () => {
  const root = path.join(await tempWorkspace('worker-root'), 'srv', 'agents');
  expect(existsSync(root)).toBe(false);
  const worker = runCli(['worker', '--workspace-root', root], {
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_TASK_QUEUE: uniqueQueue('worker-root'),
    ANTHROPIC_API_KEY: '',
  });
  const deadline = Date.now() + 60_000;
  while (
    !/Worker polling task queue/.test(worker.stdout()) &&
    worker.child.exitCode === null &&
    Date.now() < deadline
  ) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const polled = worker.stdout();
  worker.child.kill('SIGTERM');
  const outcome = await worker.done;
  expect({ polled: /Worker polling task queue/.test(polled), stderr: outcome.stderr }).toEqual({
    polled: true,
    stderr: expect.any(String),
  });
  expect(polled).toContain(`Workspace roots: ${root}`);
  expect({ code: outcome.code, stdout: outcome.stdout, stderr: outcome.stderr }).toEqual({
    code: 0,
    stdout: expect.any(String),
    stderr: expect.any(String),
  });
  expect(statSync(root).isDirectory()).toBe(true);
}, 90_000);
