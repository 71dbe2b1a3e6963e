import type { WorkflowHandle } from '@temporalio/client';
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import * as path from 'node:path';
import { devServerArgs, freePort, waitUntilReachable } from '../src/server/dev-server';
import { findTemporalCli } from '../src/server/temporal-cli';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../src/shared';
import type { ActivityDeps } from '../src/activities';
import type { ModelProvider } from '../src/models/types';
import { createAgentWorker, type AgentWorker } from '../src/worker';
import type { BenchContext } from './context';
import type { BenchServer } from './server';

/**
 * Billable actions as the Temporal server itself counts them: its `action` counter (one series per
 * `action_type`: `grpc_StartWorkflowExecution`, `command_ScheduleActivityTask`,
 * `grpc_RecordActivityTaskHeartbeat`, `grpc_QueryWorkflow`, `command_UpsertWorkflowSearchAttributes`,
 * `command_BatchMarkers`, `message_UpdateWorkflowExecution:Acceptance`, …), read from the Prometheus
 * endpoint a dev server started with `--metrics-port` exposes. Temporal Cloud bills these.
 *
 * `command_RecordMarker` counts each marker (local activity) separately; Cloud bills the markers of
 * one workflow task as one action, `command_BatchMarkers`, so the per-marker series is left out.
 */
export type ActionCounts = Record<string, number>;

/** Series that are not billed as such (see above). */
const NOT_BILLED = new Set(['command_RecordMarker']);

export interface MetricsServer extends BenchServer {
  metricsUrl: string;
}

/** An in-memory dev server as durable-agent embeds it, with its Prometheus metrics on a free port. */
export async function startMetricsServer(workDir: string, log: (m: string) => void): Promise<MetricsServer> {
  const cli = await findTemporalCli({ log });
  const address = `127.0.0.1:${await freePort()}`;
  const metricsPort = await freePort();
  const out = openSync(path.join(workDir, 'temporal-server-actions.log'), 'a');
  const args = [...devServerArgs({ address, headless: true }), '--metrics-port', String(metricsPort)];
  const child = spawn(cli, args, { stdio: ['ignore', out, out] });
  await waitUntilReachable(address, 60_000, child);
  return {
    address,
    connection: { address, namespace: DEFAULT_NAMESPACE, taskQueue: DEFAULT_TASK_QUEUE },
    description: 'in-memory dev server as durable-agent embeds it, --metrics-port',
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    cpuMs: async () => undefined,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** The server's `action` counters now, summed over every label but `action_type`, for one namespace. */
export async function readActions(metricsUrl: string, namespace = DEFAULT_NAMESPACE): Promise<ActionCounts> {
  const res = await fetch(metricsUrl);
  if (!res.ok) throw new Error(`metrics endpoint ${metricsUrl} answered ${res.status}`);
  return parseActions(await res.text(), namespace);
}

/** Parses Prometheus text: `action{action_type="…",namespace="…",…} 12`. */
export function parseActions(text: string, namespace: string): ActionCounts {
  const counts: ActionCounts = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('action{')) continue;
    const close = line.lastIndexOf('}');
    const labels = line.slice('action{'.length, close);
    const value = Number(line.slice(close + 1).trim());
    const type = /action_type="([^"]*)"/.exec(labels)?.[1];
    const ns = /namespace="([^"]*)"/.exec(labels)?.[1];
    if (!type || ns !== namespace || !Number.isFinite(value) || NOT_BILLED.has(type)) continue;
    counts[type] = (counts[type] ?? 0) + value;
  }
  return counts;
}

export function difference(after: ActionCounts, before: ActionCounts): ActionCounts {
  const diff: ActionCounts = {};
  for (const [type, value] of Object.entries(after)) {
    const d = value - (before[type] ?? 0);
    if (d > 0) diff[type] = d;
  }
  return diff;
}

export const totalOf = (counts: ActionCounts) => Object.values(counts).reduce((a, b) => a + b, 0);

/**
 * The actions `fn` caused: the counters are read before and after, once they have stopped moving
 * (the server records some of them after answering). Nothing else may run on the server meanwhile.
 */
export async function countActions<T>(
  metricsUrl: string,
  fn: () => Promise<T>,
): Promise<{ value: T; actions: ActionCounts }> {
  const before = await settled(metricsUrl);
  const value = await fn();
  const after = await settled(metricsUrl);
  return { value, actions: difference(after, before) };
}

/** The counters once two reads a second apart agree (the server may record an action after answering). */
async function settled(metricsUrl: string): Promise<ActionCounts> {
  let last = await readActions(metricsUrl);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = await readActions(metricsUrl);
    if (totalOf(now) === totalOf(last)) return now;
    last = now;
  }
  return last;
}

/**
 * Upserts of `TemporalChangeVersion` in a run's history: the SDK writes one for each `patched()`
 * flag a run passes (one billable action each), not the run's own search attributes.
 */
export async function patchUpserts(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter(
    (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TemporalChangeVersion,
  ).length;
}

/**
 * The production worker an actions figure runs on: the bench's server, bundle and workspace, the
 * figure's model and tools (and any other activity dependency, such as an MCP runtime).
 */
export function actionsWorker(
  ctx: BenchContext,
  taskQueue: string,
  model: ModelProvider,
  deps: Omit<Partial<ActivityDeps>, 'models'> & Pick<ActivityDeps, 'tools'>,
): Promise<AgentWorker> {
  return createAgentWorker({
    connection: ctx.connection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: ctx.bundlePath,
    deps: { models: () => model, defaultWorkspace: ctx.workspace, ...deps },
  });
}
