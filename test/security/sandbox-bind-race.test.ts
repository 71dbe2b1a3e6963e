import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { runCommandHook } from '../../src/hooks';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { detectSandbox, findBwrap } from '../../src/sandbox';
import { pinWorkspace } from '../../src/safe-fs/workspace';
import { makeContext, makeTempDir } from '../tools/helpers';

/**
 * The sandbox's bind race, for real: bubblewrap used to bind the workspace by its path, a few
 * milliseconds after the worker checked it, so a parent folder replaced by a symlink in between
 * (another run, whose workspace is a parent folder, can do that) got a decoy directory mounted
 * writable in its place. A separate process swaps the workspace's parent for a symlink to a decoy
 * folder and back as fast as it can, while bash calls and sandboxed hooks write a mark in their
 * working directory. Every mark must land in the workspace; none in the decoy.
 */
const RACE_MS = 15_000;

/** The swapper: take the parent away, plant a symlink to the decoy in its place, put it back. */
const SWAPPER = `
const fs = require('node:fs');
const [parent, decoy, ms] = process.argv.slice(1);
const away = parent + '.away';
const deadline = Date.now() + Number(ms);
let swaps = 0;
while (Date.now() < deadline) {
  try {
    fs.renameSync(parent, away);
    fs.symlinkSync(decoy, parent);
    fs.unlinkSync(parent);
    fs.renameSync(away, parent);
    swaps++;
  } catch {}
}
process.stdout.write(String(swaps));
`;

const bwrap = findBwrap();

(bwrap ? test : test.skip)(
  `a workspace parent swapped for a symlink for ${RACE_MS / 1000} s: no bash call or hook writes outside`,
  async () => {
    const { dir, cleanup } = makeTempDir('da-bind-race-');
    const parent = path.join(dir, 'parent');
    const ws = path.join(parent, 'ws');
    const decoy = path.join(dir, 'decoy');
    mkdirSync(ws, { recursive: true });
    mkdirSync(path.join(decoy, 'ws'), { recursive: true });
    // As at run start: the real path is recorded and pinned, and the check before each call refuses a moved one.
    pinWorkspace(ws);
    let swapper: ReturnType<typeof spawn> | undefined;
    try {
      const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap' })]);
      const status = detectSandbox({ DURABLE_AGENT_SANDBOX: 'bwrap' });
      swapper = spawn(process.execPath, ['-e', SWAPPER, parent, decoy, String(RACE_MS)], { stdio: 'pipe' });
      let swaps = '';
      swapper.stdout?.on('data', (chunk: Buffer) => (swaps += chunk.toString()));
      const child = swapper;
      const swapperDone = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const deadline = Date.now() + RACE_MS;

      const count = { bashRan: 0, bashRefused: 0, hooksRan: 0, hooksRefused: 0 };
      let id = 0;
      const loop = async (step: (i: number) => Promise<void>) => {
        while (Date.now() < deadline) await step(id++);
      };
      await Promise.all([
        ...[1, 2].map(() =>
          loop(async (i) => {
            const command = `echo ${i} > bash-${i}`;
            const result = await registry.run('bash', { command }, makeContext(ws, { toolUseId: `t-${i}` }));
            if (result.isError) count.bashRefused++;
            else count.bashRan++;
          }),
        ),
        loop(async (i) => {
          const outcome = await runCommandHook({
            command: `echo ${i} > hook-${i}`,
            stdin: '{}',
            workspace: ws,
            timeoutMs: 10_000,
            sandbox: { status, network: false },
            signal: new AbortController().signal,
          });
          if (outcome.code === 0 && outcome.failure === undefined) count.hooksRan++;
          else count.hooksRefused++;
        }),
      ]);
      await swapperDone;

      const inside = readdirSync(ws);
      const landedOutside = readdirSync(path.join(decoy, 'ws'));
      console.log(
        `bind race: ${Number(swaps)} swaps by the other process, ${id} calls (${JSON.stringify(count)}), ` +
          `${inside.length} marks in the workspace, ${landedOutside.length} in the decoy` +
          (landedOutside.length ? `: ${landedOutside.slice(0, 5).join(', ')}…` : ''),
      );
      expect(Number(swaps)).toBeGreaterThan(1000);
      expect(landedOutside).toEqual([]);
      // The race was real: calls got through while the parent was in place, and others were refused.
      expect(count.bashRan).toBeGreaterThan(0);
      expect(count.hooksRan).toBeGreaterThan(0);
      expect(count.bashRefused + count.hooksRefused).toBeGreaterThan(0);
      // Every call that says it ran wrote its mark in the workspace.
      expect(inside.length).toBe(count.bashRan + count.hooksRan);
    } finally {
      if (swapper?.exitCode === null) swapper.kill('SIGKILL');
      cleanup();
    }
  },
  40_000,
);
