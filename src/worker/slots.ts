import { ResourceBasedController, Runtime, type WorkerOptions } from '@temporalio/worker';
import type { WorkerSettings } from './settings';

/**
 * The SDK's own defaults for the slots a CPU target leaves alone (local activities, Nexus tasks), and
 * for activities the most a CPU target hands out: the same cap as without one (the SDK's resource-based
 * default, 2,000, would let a worker whose calls wait on the network take far more than it does now).
 */
const LOCAL_ACTIVITY_SLOTS = 100;
const NEXUS_SLOTS = 100;
const MAX_ACTIVITY_SLOTS = 100;
/** Memory use of the machine above which the CPU-targeted worker also stops taking activities. */
const MEMORY_TARGET = 0.95;

/**
 * The worker options that set slots. The SDK refuses a tuner next to the first three and ignores the
 * fourth; a caller who sets any of them chose the slots, so a CPU target is not applied over them.
 */
const SLOT_OPTIONS = [
  'maxConcurrentWorkflowTaskExecutions',
  'maxConcurrentActivityTaskExecutions',
  'maxConcurrentLocalActivityExecutions',
  'maxConcurrentNexusTaskExecutions',
] as const;

/**
 * How many tasks a worker takes at once (docs/configuration.md):
 * - workflow tasks, queries among them: `DURABLE_AGENT_WORKFLOW_TASK_SLOTS` (see DEFAULT_WORKFLOW_TASK_SLOTS);
 * - activities: as many as the SDK allows, or, with `DURABLE_AGENT_CPU_TARGET`, none more while the
 *   machine's CPU is above the target (the SDK's resource-based slots, one controller shared by the
 *   process's workers). An overloaded worker then leaves the runs' next calls waiting on the server
 *   instead of a backlog of workflow tasks, so queries, which the server holds back while a run has a
 *   workflow task pending, answer at once; the price is throughput (docs/benchmarks.md, "Query
 *   latency under load").
 *
 * A caller's own slot counts or tuner replace all of this.
 */
export function workerSlots(
  settings: Pick<WorkerSettings, 'workflowTaskSlots' | 'cpuTarget'>,
  workerOptions: Partial<WorkerOptions> | undefined,
): Pick<WorkerOptions, 'maxConcurrentWorkflowTaskExecutions' | 'tuner'> {
  const own = workerOptions?.tuner !== undefined || SLOT_OPTIONS.some((o) => workerOptions?.[o] !== undefined);
  if (own && settings.cpuTarget !== undefined) {
    warnOnce(
      'DURABLE_AGENT_CPU_TARGET is not applied: the worker options set their own slots (a tuner or a maxConcurrent… count)',
    );
  }
  if (workerOptions?.tuner || workerOptions?.maxConcurrentWorkflowTaskExecutions !== undefined) return {};
  const plain = { maxConcurrentWorkflowTaskExecutions: settings.workflowTaskSlots };
  if (settings.cpuTarget === undefined || own) return plain;
  const fixed = (numSlots: number) => ({ type: 'fixed-size' as const, numSlots });
  return {
    tuner: {
      workflowTaskSlotSupplier: fixed(settings.workflowTaskSlots),
      // The SDK's default ramp (a new slot every 50 ms) would cap a busy worker at 20 activities a second.
      activityTaskSlotSupplier: {
        type: 'resource-based',
        controller: controllerFor(settings.cpuTarget),
        minimumSlots: 2,
        maximumSlots: MAX_ACTIVITY_SLOTS,
        rampThrottle: 1,
      },
      localActivityTaskSlotSupplier: fixed(LOCAL_ACTIVITY_SLOTS),
      nexusTaskSlotSupplier: fixed(NEXUS_SLOTS),
    },
  };
}

let warned = false;
function warnOnce(message: string): void {
  if (warned) return;
  warned = true;
  Runtime.instance().logger.warn(message);
}

const controllers = new Map<number, ResourceBasedController>();

/** One controller per target in the process: the worker's main and own-queue workers share its measure. */
function controllerFor(targetCpuUsage: number): ResourceBasedController {
  let controller = controllers.get(targetCpuUsage);
  if (!controller) {
    controller = ResourceBasedController.create({ targetCpuUsage, targetMemoryUsage: MEMORY_TARGET });
    controllers.set(targetCpuUsage, controller);
  }
  return controller;
}
