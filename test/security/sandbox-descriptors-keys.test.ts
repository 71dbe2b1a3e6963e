/**
 * Findings: "inherited descriptors in the sandbox" and "/proc/keys names". A descriptor the worker
 * inherited without close-on-exec reached the command, and stayed open in bubblewrap's init for the
 * command to reopen through /proc/1/fd; /proc/keys listed the names of the host user's keys. Against
 * the real bubblewrap, with the exact arguments a bash call uses.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync, existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { bwrapProcessEnv, findBwrap } from '../../src/sandbox';
import { sandboxedShellArgs } from '../../src/sandbox/spawn';
import { holdWorkspace } from '../../src/tools/held-workspace';
import { makeContext, makeWorkspace } from '../tools/helpers';

const SECRET = `inherited-secret-${process.pid}-${Date.now()}`;
const { ws, outside, cleanup } = makeWorkspace();
afterAll(cleanup);

/**
 * Runs `command` the way a workspace MCP server is started (the workspace held open and reopened
 * through this process's /proc), with `extra` passed down as descriptors 3 and up.
 */
async function runWithInherited(command: string, extra: number[]): Promise<string> {
  const bwrap = findBwrap() as string;
  const held = await holdWorkspace(ws);
  const args = sandboxedShellArgs(command, bwrap, {
    workspace: held.path,
    workspaceSource: held.source,
    network: false,
    limits: { maxProcesses: 64, tmpBytes: 16 * 1024 * 1024, shmBytes: 4 * 1024 * 1024 },
  });
  const child = spawn('/bin/bash', args, {
    cwd: ws,
    env: bwrapProcessEnv(),
    stdio: ['ignore', 'pipe', 'pipe', ...extra],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  await held.close();
  return out;
}

test('a descriptor the worker inherited reaches neither the command nor bubblewrap’s init', async () => {
  const secretFile = path.join(outside, 'inherited.txt');
  writeFileSync(secretFile, `${SECRET}\n`);
  const fd = openSync(secretFile, 'r');
  try {
    const output = await runWithInherited(
      'for f in /proc/1/fd/* /proc/$$/fd/*; do cat "$f" 2>/dev/null; done; cat <&3 2>&1; ' +
        'ls /proc/$$/fd > /tmp/shell; ls -l /proc/1/fd > /tmp/init; ' +
        'echo "shell: $(tr "\\n" " " < /tmp/shell)"; grep -c -- "->" /tmp/init; grep -v -- "-> /dev/null\\|pipe:\\|anon_inode:" /tmp/init',
      [fd, fd],
    );
    expect(output).not.toContain(SECRET);
    expect(output).toMatch(/Bad file descriptor/); // fd 3 is closed
    // The shell holds stdin, stdout, stderr; bubblewrap's init those and its own eventfd: nothing of a file.
    expect(output).toMatch(/^shell: 0 1 2 $/m);
    expect(output).toMatch(/^4\ntotal 0\n/m);
  } finally {
    closeSync(fd);
  }
});

test('the workspace descriptor a bash call mounts is closed before its command runs', async () => {
  const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap' })]);
  const result = await registry.run(
    'bash',
    {
      command:
        'ls /proc/$$/fd > /tmp/shell; ls -l /proc/1/fd > /tmp/init; echo "shell: $(tr "\\n" " " < /tmp/shell)"; ' +
        'grep -c -- "->" /tmp/init; ' +
        'grep -v -- "-> /dev/null\\|pipe:\\|anon_inode:" /tmp/init; touch mounted-here',
    },
    makeContext(ws),
  );
  expect(result.content).toMatch(/^shell: 0 1 2 $/m);
  // bubblewrap's init: stdin, stdout, stderr and its own eventfd; no directory.
  expect(result.content).toMatch(/^4\ntotal 0\n/m);
  expect(existsSync(path.join(ws, 'mounted-here'))).toBe(true);
});

test('the host user’s key names are not readable in the sandbox', async () => {
  const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap' })]);
  const result = await registry.run(
    'bash',
    { command: 'cat /proc/keys 2>&1; cat /proc/key-users 2>&1; echo done' },
    makeContext(ws),
  );
  expect(result.content).toMatch(/cat: \/proc\/keys: Permission denied/);
  expect(result.content).toMatch(/cat: \/proc\/key-users: Permission denied/);
  expect(result.content).not.toMatch(/keyring/);
  expect(result.content).toContain('done');
});
