import { bundleWorkflowCode } from '@temporalio/worker';
import { spawn } from 'node:child_process';
import { openSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { devServerArgs, freePort, waitUntilReachable } from '../src/server/dev-server';
import { findTemporalCli } from '../src/server/temporal-cli';
import { PAYLOAD_CONVERTER_PATH } from '../src/codec';
import { AGENT_WORKFLOW_MODULES, withoutSourcesContent } from '../src/worker/workflow-bundle';

/**
 * Starts one real Temporal dev server (in memory, headless) and bundles the workflow code once for
 * the whole test run. Tests read both from the environment. DA_SKIP_TEMPORAL=1 skips this for
 * unit-only runs.
 */
export default async function globalSetup(): Promise<void> {
  // Tests' workspaces are temporary directories (and a few runs use the checkout): the workers' roots.
  process.env.DURABLE_AGENT_WORKSPACE_ROOTS ??= [await fs.realpath(os.tmpdir()), path.resolve(__dirname, '..')].join(
    path.delimiter,
  );
  // Workers record checkpoints by default (docs/checkpoints.md), into the user's data directory: tests
  // opt in with a store of their own (test/checkpoints/), so a run in the checkout never records it.
  process.env.DURABLE_AGENT_CHECKPOINTS ??= 'off';
  if (process.env.DA_SKIP_TEMPORAL === '1') return;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-test-'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '..', 'src', 'workflows'),
    // As `npm run build` bundles it: a client's undecodable payload is a value the handlers reject.
    payloadConverterPath: PAYLOAD_CONVERTER_PATH,
    // As `npm run build` bundles it: zod shared between runs, the agent's own stack formatting
    // (src/worker/workflow-bundle.ts).
    preloadModules: [...AGENT_WORKFLOW_MODULES],
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} },
  });
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  // As `npm run build` writes it: the source map without the sources' text.
  await fs.writeFile(bundlePath, withoutSourcesContent(code));

  const cli = await findTemporalCli({ log: (m) => console.log(`[global-setup] ${m}`) });
  // A server of your own instead (another Temporal version, e.g. for test/versioning): its address.
  const external = process.env.DA_TEST_EXTERNAL_TEMPORAL_ADDRESS?.trim();
  if (external) {
    process.env.DA_TEST_TEMPORAL_ADDRESS = external;
    process.env.DA_TEST_WORKFLOW_BUNDLE = bundlePath;
    process.env.DA_TEST_TEMPORAL_CLI = cli;
    (globalThis as Record<string, unknown>).__daTemporal = { dir };
    return;
  }
  const address = `127.0.0.1:${await freePort()}`;
  // The server's own log goes to a file: it is noisy at shutdown and rarely what a failing test needs.
  const log = openSync(path.join(dir, 'temporal-server.log'), 'a');
  const child = spawn(cli, devServerArgs({ address, headless: true }), { stdio: ['ignore', log, log] });
  await waitUntilReachable(address, 60_000, child);

  process.env.DA_TEST_TEMPORAL_ADDRESS = address;
  process.env.DA_TEST_WORKFLOW_BUNDLE = bundlePath;
  process.env.DA_TEST_TEMPORAL_CLI = cli;
  (globalThis as Record<string, unknown>).__daTemporal = { child, dir };
}
