import { Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { ensureSearchAttributes } from '../server/search-attributes';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../shared/search-attributes';
import { sandboxStatus } from '../sandbox';
import { withToolProcessCleanup } from '../worker';

/** What the plugin set up for one worker, used when that worker runs. */
export interface Companion {
  /** The agent's activities, by activity type, as registered on the worker. */
  activities: Record<string, unknown>;
  /** The worker's own queue (sticky activities), polled by an activity-only worker next to it. */
  stickyQueue?: string;
  registerSearchAttributes: boolean;
  /** The worker's options after the plugin configured them (connection, data converter, settings). */
  workerOptions: WorkerOptions;
}

/** The command that creates the agent's search attributes, for when the worker may not. */
export function searchAttributeCommand(namespace: string): string {
  const names = SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => `--name ${d.name} --type ${d.cliType}`).join(' ');
  return `temporal operator search-attribute create --namespace ${namespace} ${names}`;
}

/** Creates the agent's search attributes when missing; a namespace the worker may not change gets the command. */
async function ensureAttributes(worker: Worker, namespace: string): Promise<void> {
  const connection = worker.connection;
  if (!connection) return;
  try {
    const added = await ensureSearchAttributes(connection.operatorService, namespace);
    if (added.length)
      Runtime.instance().logger.info(`durable-agent: created search attributes ${added.join(', ')} in ${namespace}`);
  } catch (err) {
    throw new Error(
      `durable-agent needs its search attributes in namespace ${namespace} and could not check or create them ` +
        `(${(err as Error).message.split('\n')[0]}). Create them once with: ${searchAttributeCommand(namespace)} ` +
        '(on Temporal Cloud: tcld namespace search-attributes add), then pass registerSearchAttributes: false.',
    );
  }
}

/**
 * Runs `worker` (through `run`) with what the agent needs around it: the search attributes checked
 * (the worker stops with the error when they cannot be had), an activity-only worker on its own
 * queue while it runs (sticky activities), and the processes tools left running stopped when both
 * have stopped. `run` is called at once, so the worker is RUNNING as soon as `Worker.run` returns
 * its promise (`runUntil` shuts down only a running worker); the rest is set up beside it.
 */
export async function runWithCompanion(worker: Worker, companion: Companion, run: () => Promise<void>): Promise<void> {
  const namespace = worker.options.namespace;
  await withToolProcessCleanup(async () => {
    const running = run();
    let failure: unknown;
    const stopMain = (err: unknown) => {
      failure ??= err;
      if (worker.getState() === 'RUNNING') worker.shutdown();
    };
    const own = await (async () => {
      if (companion.registerSearchAttributes) await ensureAttributes(worker, namespace);
      const sandbox = sandboxStatus();
      if (sandbox.mode !== 'bwrap') Runtime.instance().logger.warn(`durable-agent: ${sandbox.detail}`);
      return companion.stickyQueue ? await createOwnWorker(worker, companion, companion.stickyQueue) : undefined;
    })().catch((err: unknown) => {
      stopMain(err);
      return undefined;
    });
    // Started only while the main worker runs; otherwise released at once.
    const ownRun =
      own && worker.getState() === 'RUNNING'
        ? own.run().catch(stopMain)
        : own?.runUntil(Promise.resolve()).catch(() => {});
    try {
      await running;
    } finally {
      if (own?.getState() === 'RUNNING') own.shutdown();
      await ownRun;
    }
    if (failure !== undefined) throw failure;
  });
}

function createOwnWorker(worker: Worker, companion: Companion, taskQueue: string): Promise<Worker> {
  return Worker.create({
    ...pick(companion.workerOptions, COMPANION_OPTIONS),
    ...(companion.workerOptions.interceptors?.activity
      ? { interceptors: { activity: companion.workerOptions.interceptors.activity } }
      : {}),
    ...(worker.connection ? { connection: worker.connection } : {}),
    namespace: worker.options.namespace,
    taskQueue,
    activities: companion.activities,
  });
}

/** The main worker's options its activity-only companion takes over. */
const COMPANION_OPTIONS = [
  'dataConverter',
  'identity',
  'maxHeartbeatThrottleInterval',
  'defaultHeartbeatThrottleInterval',
  'shutdownGraceTime',
  'shutdownForceTime',
  'maxConcurrentActivityTaskExecutions',
] as const satisfies ReadonlyArray<keyof WorkerOptions>;

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]])) as Partial<
    Pick<T, K>
  >;
}
