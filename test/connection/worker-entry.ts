/**
 * A dedicated worker process connected the production way (`loadConnectionConfig` → `connectWorker`
 * → `createAgentWorker`), for the TLS tests: `DA_TEST_PROFILE` plays `--profile`, the rest is the
 * environment. Prints `Worker polling task queue …` once polling; SIGTERM stops it.
 */
import { ConnectionConfigError, describeConnection, loadConnectionConfig } from '../../src/client/config';
import { connectWorker, createAgentWorker, defaultActivityDeps } from '../../src/worker';

async function main(): Promise<void> {
  const profile = process.env.DA_TEST_PROFILE;
  const config = loadConnectionConfig(profile ? { profile } : {});
  const connection = await connectWorker(config);
  const worker = await createAgentWorker({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    deps: defaultActivityDeps(),
    ...(process.env.DA_TEST_WORKFLOW_BUNDLE ? { workflowBundlePath: process.env.DA_TEST_WORKFLOW_BUNDLE } : {}),
  });
  process.on('SIGTERM', () => worker.shutdown());
  process.stdout.write(`Worker polling task queue '${config.taskQueue}' on ${describeConnection(config)}\n`);
  await worker.run();
  await connection.close();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof ConnectionConfigError ? 2 : 1);
  },
);
