import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { createActivities, type ActivityDeps } from './activities';
import { temporalConfig, type TemporalConfig } from './config';
import { createModelResolver } from './models';
import { createDefaultRegistry } from './tools';

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  deps: ActivityDeps;
  /** A prebuilt workflow bundle; without it the workflows are bundled at start (a few seconds). */
  workflowBundlePath?: string;
  /** How long a SIGTERM'd worker lets running activities finish. */
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  identity?: string;
}

/** The bundle `npm run build` writes next to the compiled worker, if present. */
export function prebuiltBundlePath(): string | undefined {
  const candidate = path.join(__dirname, '..', 'workflow-bundle.js');
  return existsSync(candidate) ? candidate : undefined;
}

export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const bundle = options.workflowBundlePath ?? prebuiltBundlePath();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: require.resolve('./workflows') }),
    activities: createActivities(options.deps),
    // Cancellation reaches an activity only through a heartbeat response: keep the gap short so
    // an interrupt stops running tools and model calls within seconds.
    maxHeartbeatThrottleInterval: '1 second',
    defaultHeartbeatThrottleInterval: '1 second',
    shutdownGraceTime: options.shutdownGraceTime ?? '10 seconds',
    ...(options.identity ? { identity: options.identity } : {}),
  });
}

/** The production wiring: real model providers and built-in tools. */
export function defaultActivityDeps(): ActivityDeps {
  return { models: createModelResolver(), tools: createDefaultRegistry(), defaultWorkspace: process.cwd() };
}

export async function connectWorker(config: TemporalConfig = temporalConfig()): Promise<NativeConnection> {
  return NativeConnection.connect({ address: config.address });
}
