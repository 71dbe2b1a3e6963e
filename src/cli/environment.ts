import type { Client } from '@temporalio/client';
import { connectClient } from '../client';
import { describeConnection, mayStartEmbeddedServer, type TemporalConfig } from '../config';
import { isReachable, startBackgroundDevServer } from '../server/dev-server';
import { type AgentWorker, connectWorker, createAgentWorker, defaultActivityDeps } from '../worker';
import { rootProblem, rootsFromEnv } from '../tools/workspace-roots';
import { installWorkerRuntime } from './worker-command';

/**
 * Connects to Temporal. When nothing answers at a loopback address and neither TLS nor an API key is
 * configured, starts the embedded dev server in the background (SQLite persistence, Web UI on :8233)
 * so a newcomer needs no other step. A server that was configured (TLS, API key, another host) and
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
    out(`Temporal dev server up (pid ${started.pid}, database ${started.dbFile}, log ${started.logFile})`);
  }
  return connectClient(config);
}

/** A worker inside the CLI process, for the one-command experience. It stops when the CLI is done. */
export async function startInlineWorker(
  config: TemporalConfig,
  out: (line: string) => void,
  /** The run's workspace: the operator chose it on this command line, so this worker accepts it. */
  workspace?: string,
): Promise<{ worker: AgentWorker; done: Promise<void> }> {
  // The worker shares the terminal with the run's progress, which already reports failed calls:
  // only errors belong there. Ctrl-C is the CLI's to handle (it interrupts the run).
  installWorkerRuntime({ shutdownSignals: [], level: 'ERROR' });
  const connection = await connectWorker(config);
  const worker = await createAgentWorker({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    deps: { ...defaultActivityDeps(), workspaceRoots: inlineWorkspaceRoots(workspace) },
  });
  out(`Worker started in this process on task queue '${config.taskQueue}'`);
  const done = worker.run().finally(() => connection.close());
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
