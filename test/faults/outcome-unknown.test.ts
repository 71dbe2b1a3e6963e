import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { outcomeUnknownMessage } from '../../src/activities/outcome-unknown';
import { tempWorkspace } from '../support/temporal';

const call = (name: string, input: unknown) => ({ toolUseId: 'toolu_1', name, input });

test('bash: says it was not run again and names the workspace files changed since the call was scheduled', async () => {
  const workspace = await tempWorkspace('unknown');
  await fs.writeFile(path.join(workspace, 'old.txt'), 'old');
  const old = new Date(Date.now() - 60_000);
  await fs.utimes(path.join(workspace, 'old.txt'), old, old);
  const since = Date.now() - 5_000;
  await fs.mkdir(path.join(workspace, 'out'));
  await fs.writeFile(path.join(workspace, 'out', 'log.txt'), 'new line\n');
  await fs.mkdir(path.join(workspace, 'node_modules'));
  await fs.writeFile(path.join(workspace, 'node_modules', 'noise.js'), '');

  const text = await outcomeUnknownMessage(call('bash', { command: 'make' }), workspace, 2, { since });
  expect(text).toMatch(/^Error: the outcome of this bash call is unknown\. An earlier attempt \(1 before this one\)/);
  expect(text).toContain('it was NOT run again');
  expect(text).toContain(`Workspace files changed since ${new Date(since).toISOString()}: out/log.txt (9 bytes,`);
  expect(text).not.toContain('old.txt');
  expect(text).not.toContain('noise.js');
});

test('bash: says so when nothing changed', async () => {
  const workspace = await tempWorkspace('unknown');
  const text = await outcomeUnknownMessage(call('bash', { command: 'true' }), workspace, 3, { since: Date.now() });
  expect(text).toContain('(2 before this one)');
  expect(text).toMatch(/No file in the workspace changed since .*, outside \.git, node_modules, \.durable-agent\./);
});

test('write_file: reports the file and whether it changed after the call was scheduled', async () => {
  const workspace = await tempWorkspace('unknown');
  const since = Date.now() - 5_000;
  await fs.writeFile(path.join(workspace, 'a.txt'), 'abc');
  const written = await outcomeUnknownMessage(call('write_file', { path: 'a.txt', content: 'abc' }), workspace, 2, {
    since,
  });
  expect(written).toMatch(
    /Current state of a\.txt: exists, 3 bytes, modified .*\. It changed after .*, so the earlier attempt may well have written it\./,
  );
  expect(written).toContain('repeat the call only if it was not');

  const untouched = await outcomeUnknownMessage(call('edit_file', { path: 'a.txt' }), workspace, 2, {
    since: Date.now() + 60_000,
  });
  expect(untouched).toMatch(/It has not changed since .*Z\./);

  const missing = await outcomeUnknownMessage(call('write_file', { path: 'b.txt', content: 'x' }), workspace, 2);
  expect(missing).toContain('Current state of b.txt: does not exist');
});

test('a call moved from a lost worker lists only changes since the workflow first scheduled it, not files changed before', async () => {
  const { MockActivityEnvironment } = await import('@temporalio/testing');
  const workspace = await tempWorkspace('unknown');
  // Changed five minutes ago: before the run started, inside the tool's 11-minute timeout.
  await fs.writeFile(path.join(workspace, 'before-the-run.txt'), 'old');
  const fiveMinutesAgo = new Date(Date.now() - 5 * 60_000);
  await fs.utimes(path.join(workspace, 'before-the-run.txt'), fiveMinutesAgo, fiveMinutesAgo);
  const firstScheduledAt = Date.now() - 2_000;
  await fs.writeFile(path.join(workspace, 'by-the-lost-attempt.txt'), 'new');
  const env = new MockActivityEnvironment({ scheduledTimestampMs: Date.now() });
  const text = await env.run(() =>
    outcomeUnknownMessage(
      { ...call('bash', { command: 'make' }), mayHaveStarted: true, firstScheduledAt },
      workspace,
      1,
    ),
  );
  expect(text).toContain(`changed since ${new Date(firstScheduledAt).toISOString()}: by-the-lost-attempt.txt`);
  expect(text).not.toContain('before-the-run.txt');
});
