import { MockActivityEnvironment } from '@temporalio/testing';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createActivities } from '../src/activities';
import type { PrepareRunInput } from '../src/shared';
import { createDefaultRegistry } from '../src/tools';
import { median } from './stats';

/**
 * `npm run build && node dist/bench/run-start-cpu.js [calls=2000] [rounds=3]`: the worker's CPU for one
 * run start (the `prepareRun` local activity: admit the workspace, assemble the system prompt from
 * it, read the hooks settings, look for `.mcp.json`), without a server. It runs the real activity
 * through the SDK's MockActivityEnvironment (the activity context and its AsyncLocalStorage, as on a
 * worker) on a fresh workspace in the system temporary directory, as the throughput bench's runs
 * start, and prints the process's CPU per call (`process.cpuUsage`: the main thread's work, and the
 * thread pool's and the garbage collector's), median over rounds after a warm-up.
 *
 * It exists because run start is paid once per run on the main thread, which the throughput figure
 * spreads over 10 iterations: at about 1 ms per start, 0.1 ms per iteration, a quarter of ours'
 * main-thread excess over naive there (docs/benchmarks.md, "Current Details rendered when read; run
 * start's file probes synchronous").
 */
async function main(): Promise<void> {
  const calls = positive(process.argv[2], 2000);
  const rounds = positive(process.argv[3], 3);
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'da-run-start-'));
  try {
    const workspace = await fs.mkdtemp(path.join(root, 'ws-'));
    const activities = createActivities({
      models: () => {
        throw new Error('run start calls no model');
      },
      tools: createDefaultRegistry(),
      defaultWorkspace: workspace,
      workspaceRoots: [root],
    });
    const env = new MockActivityEnvironment({});
    // What the workflow sends for a run of the throughput bench (src/workflows/calls/prepare-run.ts).
    const input: PrepareRunInput = {
      context: {
        workspace,
        toolNames: ['read_file', 'bash'],
        startedAt: new Date().toISOString(),
        model: 'claude-bench',
        toolProtocol: 'native',
      },
      mcp: true,
    };
    const once = () => env.run(activities.prepareRun, input);
    for (let i = 0; i < 200; i++) await once();
    const perCall: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < calls; i++) await once();
      const used = process.cpuUsage(before);
      perCall.push((used.user + used.system) / 1000 / calls);
    }
    console.log(
      `Run start (prepareRun): ${median(perCall).toFixed(3)} ms of the process's CPU per run ` +
        `(rounds: ${perCall.map((ms) => ms.toFixed(3)).join(', ')}; ${calls} calls each)`,
    );
    console.log(`reproduce: node dist/bench/run-start-cpu.js ${calls} ${rounds}`);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}

function positive(arg: string | undefined, fallback: number): number {
  const n = arg === undefined ? fallback : Number(arg);
  if (!Number.isInteger(n) || n < 1) throw new Error(`expected a positive whole number, got ${arg}`);
  return n;
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
