import { promiseHooks } from 'node:v8';
import { Worker } from '@temporalio/worker';
import { uniqueName } from './context';
import type { History } from './history';
import { createBenchModel } from './scenario';
import {
  bundleBenchWorkflows,
  connectBenchClient,
  connectBenchWorker,
  makeWorkDir,
  naiveBundleOf,
  startBenchServer,
} from './server';
import { median } from './stats';
import { installQuietRuntime, runOnce, type Subject } from './workers';

const ITERATIONS = 10;
const OUTPUT_BYTES = 1024;

/**
 * `node dist/bench/workflow-cpu.js [replays=200] [rounds=3]`: what the workflow side of one run costs,
 * ours against the naive loop, without the noise of a busy machine. It records one run of each in the
 * throughput shape (10 iterations, 1 KiB tool output, a regular-activity tool), then replays each
 * history `replays` times per round in this process (the bench's bundle, the SDK's replay worker),
 * alternating ours and naive for `rounds` rounds after a warm-up round.
 *
 * A replay runs the workflow code of a live run (the same commands, promises and payload
 * conversions) without the server, the activities or the worker's main-thread bookkeeping, so its
 * CPU is the workflow thread's share of the throughput figure's worker CPU. It also counts the
 * promises the workflow code creates: the SDK's promise hook (always on) runs for each one, and in the
 * naive loop's bundle (the SDK's defaults) captures and source-maps a stack for each, which makes them
 * the largest cost a workflow change can add or remove (docs/contributing.md, "The hot path").
 */
async function main(): Promise<void> {
  const [replays = 200, rounds = 3] = process.argv.slice(2).map(Number);
  const log = (m: string) => process.stderr.write(`[workflow-cpu] ${m}\n`);
  installQuietRuntime();
  const workDir = await makeWorkDir();
  const server = await startBenchServer('embedded', workDir, log);
  const bundlePath = await bundleBenchWorkflows(workDir);
  const histories = new Map<Subject, History>();
  const connection = await connectBenchWorker(server);
  const client = await connectBenchClient(server);
  try {
    for (const subject of ['ours', 'naive'] as const) {
      const taskQueue = uniqueName(`workflow-cpu-${subject}`);
      const handle = await runOnce(client, {
        connection,
        taskQueue,
        bundlePath,
        subject,
        model: createBenchModel({ calls: ITERATIONS + 4 }),
        workspace: workDir,
        eager: true,
        iterations: ITERATIONS,
        outputBytes: OUTPUT_BYTES,
      });
      histories.set(subject, await handle.fetchHistory());
    }
  } finally {
    await client.connection.close();
    await connection.close();
    await server.stop();
  }

  const cpu: Record<Subject, number[]> = { ours: [], naive: [] };
  const promises: Record<Subject, number> = { ours: 0, naive: 0 };
  for (let round = 0; round <= rounds; round++) {
    for (const subject of ['ours', 'naive'] as const) {
      // The warm-up round (the bundle's first evaluation, V8's first compilations) counts promises;
      // the measured rounds do not, so the counting hook's own cost stays out of their CPU.
      const measured = await replay(
        subject === 'ours' ? bundlePath : naiveBundleOf(bundlePath),
        subject,
        histories.get(subject)!,
        replays,
        round === 0,
      );
      if (round === 0) promises[subject] = measured.promises / replays;
      else cpu[subject].push(measured.cpuMs / replays);
    }
  }
  const line = (subject: Subject) => {
    const perRun = median(cpu[subject]);
    return (
      `${subject.padEnd(5)}  ${perRun.toFixed(2).padStart(6)} ms per run, ${(perRun / ITERATIONS).toFixed(3)} ms per iteration` +
      ` (rounds: ${cpu[subject].map((v) => v.toFixed(2)).join(', ')}); ${promises[subject].toFixed(0)} promises per run`
    );
  };
  process.stdout.write(
    `Workflow CPU of one run, replayed (${ITERATIONS} iterations × ${OUTPUT_BYTES} B, ${replays} replays × ${rounds} rounds, median):\n` +
      `${line('ours')}\n${line('naive')}\n` +
      `ours / naive: ${(median(cpu.ours) / median(cpu.naive)).toFixed(2)}×\n` +
      `reproduce: node dist/bench/workflow-cpu.js ${replays} ${rounds}\n`,
  );
  await import('node:fs/promises').then((fs) => fs.rm(workDir, { recursive: true, force: true }));
}

/** Replays `history` `times` times; process CPU meanwhile, and (when `count`) the promises workflow code created. */
async function replay(
  bundlePath: string,
  subject: Subject,
  history: History,
  times: number,
  count: boolean,
): Promise<{ cpuMs: number; promises: number }> {
  const items = Array.from({ length: times }, (_, i) => ({ workflowId: `${subject}-${i}`, history }));
  let promises = 0;
  // Workflow code runs in its own V8 context: its promises are not this realm's.
  const stop = count
    ? promiseHooks.onInit((promise) => {
        if (!(promise instanceof Promise)) promises += 1;
      })
    : () => {};
  const before = process.cpuUsage();
  try {
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: bundlePath } }, items)) {
      if (result.error) throw new Error(`replaying the ${subject} run failed: ${result.error.message}`);
    }
  } finally {
    stop();
  }
  const used = process.cpuUsage(before);
  return { cpuMs: (used.user + used.system) / 1000, promises };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
