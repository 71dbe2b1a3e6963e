import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type ReplayWorkerOptions } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ActivityDeps } from '../../src/activities';
import type { ModelProvider } from '../../src/models/types';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker, type AgentWorkerOptions } from '../../src/worker';

let runtimeInstalled = false;
/** Keep worker logs quiet in tests (expected activity and workflow failures log WARN); errors still show. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
}

export function testAddress(): string {
  const address = process.env.DA_TEST_TEMPORAL_ADDRESS;
  if (!address)
    throw new Error('No test Temporal server: run the suite with `npm test` (jest global setup starts it).');
  return address;
}

export function testBundlePath(): string {
  const bundle = process.env.DA_TEST_WORKFLOW_BUNDLE;
  if (!bundle) throw new Error('No workflow bundle: run the suite with `npm test`.');
  return bundle;
}

export interface TestEnv {
  client: Client;
  connection: Connection;
  nativeConnection: NativeConnection;
  close(): Promise<void>;
}

export async function connectTestEnv(): Promise<TestEnv> {
  quietRuntime();
  const connection = await Connection.connect({ address: testAddress() });
  const nativeConnection = await NativeConnection.connect({ address: testAddress() });
  return {
    client: new Client({ connection }),
    connection,
    nativeConnection,
    async close() {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

export const uniqueQueue = (label: string) => `test-${label}-${randomUUID().slice(0, 8)}`;

export async function tempWorkspace(prefix = 'ws'): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), `durable-agent-${prefix}-`)));
}

/**
 * Runs `fn` while a real worker with the given model polls a fresh task queue. The worker uses
 * the real built-in tools unless `deps.tools` overrides them.
 */
export async function withWorker<T>(
  env: TestEnv,
  options: {
    model: ModelProvider;
    deps?: Partial<ActivityDeps>;
    taskQueue?: string;
    stickyActivities?: boolean;
    /** A connection of its own: one process may run only one worker per task queue and connection. */
    connection?: NativeConnection;
    workerOptions?: AgentWorkerOptions['workerOptions'];
  },
  fn: (taskQueue: string) => Promise<T>,
): Promise<T> {
  const taskQueue = options.taskQueue ?? uniqueQueue('q');
  const worker = await createAgentWorker({
    connection: options.connection ?? env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => options.model, tools: createDefaultRegistry(), ...options.deps },
    stickyActivities: options.stickyActivities ?? false,
    ...(options.workerOptions ? { workerOptions: options.workerOptions } : {}),
  });
  return worker.runUntil(fn(taskQueue));
}

/**
 * Replay options for a test: the workflows replayed in worker threads, as a live worker runs them.
 * The SDK's replay worker runs them in this process by default (`debugMode: true`), which installs its
 * promise hook on this process for good: every later promise of the Jest worker then goes through it,
 * and an exception in that hook re-enters Jest's uncaught-exception handler, which creates a promise,
 * which runs the hook again, until the stack overflows (`RangeError: Maximum call stack size exceeded`
 * at `node:events`, printed by a Jest worker in CI). In a worker thread the hook stays in the thread.
 */
export function inThreads<T extends ReplayWorkerOptions>(options: T): T & { debugMode: false } {
  return { ...options, debugMode: false };
}
