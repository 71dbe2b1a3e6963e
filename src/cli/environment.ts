import type { Client } from '@temporalio/client';
import { connectClient } from '../client';
import { describeConnection, mayStartEmbeddedServer, type TemporalConfig } from '../client/config';
import { isReachable, parseAddress, startBackgroundDevServer } from '../server/dev-server';
import { type AgentWorker, connectWorker } from '../worker';
import { rootProblem, rootsFromEnv } from '../tools/workspace-roots';
import { webUiBase, noteWebUi } from './web-ui';
import { cliWorkerParts, closeCliWorkers, createCliWorker } from './worker-assembly';
import { installWorkerRuntime } from './worker-command';

/**
 * Connects to Temporal. When nothing answers at a loopback address and neither TLS nor an API key is
 * configured, starts the embedded dev server in the background (SQLite persistence, Web UI on the
 * server's port + 1000: 8233 for 7233) so a newcomer needs no other step. A server that was configured (TLS, API key, another host) and
 * does not answer is an error: standing in a plaintext dev server for it would hide the mistake.
 */
export async function ensureServer(config: TemporalConfig, out: (line: string) => void): Promise<Client> {
  if (!(await isReachable(config.address))) {
    if (!mayStartEmbeddedServer(config)) {
      throw new Error(
        `No Temporal server answers at ${describeConnection(config)}. Check TEMPORAL_ADDRESS or the profile; ` +
          'the embedded dev server stands in only for a loopback address without TLS or an API key.',
      );
    }
    out(`No Temporal server at ${config.address}: starting the embedded dev server in the background…`);
    const started = await startBackgroundDevServer({ address: config.address, namespace: config.namespace, log: out });
    // Its UI is on the port + 1000 (devServerArgs), whatever an earlier `server --ui-port` noted for this address.
    const { port } = parseAddress(config.address);
    noteWebUi(config.address, `http://127.0.0.1:${port + 1000}`);
    out(`Temporal dev server up (pid ${started.pid}, database ${started.dbFile}, log ${started.logFile})`);
    out(`Web UI: ${webUiBase(config.address)}`);
  }
  return connectClient(config);
}

/**
 * A worker inside the CLI process, for the one-command experience, made as `durable-agent worker`
 * makes its own (`createCliWorker`: same activities, settings and telemetry). It stops when the CLI
 * is done; `done` settles once it has stopped and sent the telemetry it buffered (the run's trace).
 */
export async function startInlineWorker(
  config: TemporalConfig,
  out: (line: string) => void,
  /** The run's workspace: the operator chose it on this command line, so this worker accepts it. */
  workspace?: string,
  options: { debug?: boolean } = {},
): Promise<{ worker: AgentWorker; done: Promise<void> }> {
  // The worker shares the terminal with the run's progress, which already reports failed calls:
  // only errors belong there (and, with --debug, the per-iteration lines). Ctrl-C is the CLI's to
  // handle (it interrupts the run).
  installWorkerRuntime({ shutdownSignals: [], level: 'ERROR', debug: options.debug ?? false });
  const workerOptions = { config, workspaceRoots: inlineWorkspaceRoots(workspace), debug: options.debug ?? false };
  const parts = cliWorkerParts(workerOptions);
  const connection = await connectWorker(config);
  let worker: AgentWorker;
  try {
    worker = await createCliWorker(connection, workerOptions, parts);
  } catch (e) {
    await connection.close().catch(() => undefined);
    await closeCliWorkers();
    throw e;
  }
  out(`Worker started in this process on task queue '${config.taskQueue}'`);
  const done = worker
    .run()
    .finally(() => connection.close())
    .finally(closeCliWorkers);
  return { worker, done };
}

/**
 * The inline worker's workspace roots: `DURABLE_AGENT_WORKSPACE_ROOTS`, else the directory the CLI
 * runs in; plus the run's own `--workspace`, which the person at this terminal chose.
 */
export function inlineWorkspaceRoots(workspace: string | undefined, env: NodeJS.ProcessEnv = process.env): string[] {
  const roots = rootsFromEnv(env) ?? [process.cwd()];
  // A missing workspace, `/` or a system directory is no root: the run fails at start and says why.
  return workspace !== undefined && rootProblem(workspace) === undefined ? [...roots, workspace] : roots;
}
