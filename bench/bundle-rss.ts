import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { AGENT_WORKFLOW_MODULES, editSourceMap, withoutSourcesContent } from '../src/worker/workflow-bundle';
import { makeWorkDir, startBenchServer } from './server';
import { median } from './stats';
import { installQuietRuntime } from './workers';

const SETTLE_MS = 20_000;

/**
 * `node dist/bench/bundle-rss.js [rounds=3]`: what a worker's workflow bundle costs in memory before
 * it runs anything. The agent's workflows are bundled as `npm run build` bundles them, and written
 * three ways: with the bundler's full source map, without the map's `sourcesContent` (what the
 * prebuilt bundles ship, src/worker/workflow-bundle.ts) and with an empty map. For each, in turns,
 * a fresh process creates a `Worker` on that bundle against an embedded dev server, polls for
 * 20 s, and reports its RSS after a full GC of its main thread (the median of the rounds is printed).
 */
async function main(): Promise<void> {
  if (process.argv[2] === '--probe') return probe(process.argv[3]!, process.argv[4]!);
  const rounds = Number(process.argv[2] ?? 3);
  const log = (m: string) => process.stderr.write(`[bundle-rss] ${m}\n`);
  const workDir = await makeWorkDir();
  const server = await startBenchServer('embedded', workDir, log);
  try {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../src/workflows'),
      preloadModules: [...AGENT_WORKFLOW_MODULES],
      logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
    });
    const variants = {
      'full source map': code,
      'without sourcesContent (shipped)': withoutSourcesContent(code),
      'empty source map': withEmptyMap(code),
    };
    const rss: Record<string, number[]> = {};
    for (let round = 0; round < rounds; round++) {
      for (const [name, text] of Object.entries(variants)) {
        const file = path.join(workDir, `bundle-${Object.keys(variants).indexOf(name)}.js`);
        await fs.writeFile(file, text);
        const { stdout } = await promisify(execFile)(process.execPath, [
          '--expose-gc',
          __filename,
          '--probe',
          file,
          server.address,
        ]);
        (rss[name] ??= []).push(Number(stdout.trim()));
        log(`${name}: ${stdout.trim()} MiB`);
      }
    }
    const lines = Object.entries(variants).map(([name, text]) => {
      const values = rss[name]!.sort((a, b) => a - b);
      return `${name.padEnd(34)} ${(text.length / 1048576).toFixed(1).padStart(5)} MB  RSS ${median(values).toFixed(1)} MiB (${values.join(', ')})`;
    });
    process.stdout.write(
      `A Worker on the agent's bundle, ${SETTLE_MS / 1000} s after it starts polling (median of ${rounds}):\n` +
        `${lines.join('\n')}\nreproduce: node dist/bench/bundle-rss.js ${rounds}\n`,
    );
  } finally {
    await server.stop();
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

function withEmptyMap(code: string): string {
  return editSourceMap(code, (map) => ({ version: 3, file: map.file, sources: [], names: [], mappings: '' }));
}

/** In a child process: a Worker on `bundle`, polling; prints its RSS in MiB after SETTLE_MS. */
async function probe(bundle: string, address: string): Promise<void> {
  installQuietRuntime();
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue: `bundle-rss-${process.pid}`,
    workflowBundle: { codePath: bundle },
  });
  const rss = await worker.runUntil(async () => {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    (globalThis as { gc?: () => void }).gc?.();
    return process.memoryUsage().rss;
  });
  process.stdout.write(`${(rss / 1048576).toFixed(1)}\n`);
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
