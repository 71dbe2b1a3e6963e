import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { AgentHandle } from '../client';
import { watchLocalProgress } from '../shared/live-progress';
import { liveSnapshotOf, type LiveSnapshot } from '../client/live-snapshot';

/**
 * How long a workflow task may stay pending before the events are queried anyway: the query then
 * says whether a worker answers (its failure is what tells the operator that none is up).
 */
const PENDING_TASK_PATIENCE_MS = 3_000;

/**
 * What `run`/`follow` read each poll, priced in Temporal Cloud actions. `describe()` is not an
 * action; an `events` query is. Every event the workflow logs comes with a workflow task, which
 * lengthens history, so the events are queried only when `describe()` shows a new history length
 * (or a new run, or a new status) and no workflow task is still pending (its events would follow at
 * once). The in-flight model call's text comes from the same `describe()` (heartbeat details), or,
 * when a worker in this process runs the call (`run`'s inline worker), straight from it.
 */
export class LiveFeed {
  private queried: string | undefined;
  private candidate: string | undefined;
  private pendingSince: { key: string; at: number } | undefined;
  private description: WorkflowExecutionDescription | undefined;
  /** Calls whose text arrived in-process: their heartbeat details add nothing. */
  private readonly localCalls = new Set<string>();
  private readonly unwatch: (() => void) | undefined;

  constructor(
    private readonly handle: AgentHandle,
    onLocal: ((snapshot: LiveSnapshot) => void) | undefined,
  ) {
    if (onLocal) {
      this.unwatch = watchLocalProgress(handle.workflowId, (progress) => {
        this.localCalls.add(progress.call);
        onLocal(progress);
      });
    }
  }

  /** Reads `describe()`; true when the events may have changed since the last query (`queriedEvents`). */
  async eventsChanged(now = Date.now()): Promise<boolean> {
    const d = await this.handle.describe();
    this.description = d;
    const key = `${d.runId}:${d.historyLength}:${d.status.name}`;
    if (key === this.queried) return false;
    if (d.status.name === 'RUNNING' && d.raw.pendingWorkflowTask) {
      if (this.pendingSince?.key !== key) this.pendingSince = { key, at: now };
      if (now - this.pendingSince.at < PENDING_TASK_PATIENCE_MS) return false;
    }
    this.candidate = key;
    return true;
  }

  /** The events query after `eventsChanged` answered: nothing new until history moves again. */
  queriedEvents(): void {
    this.queried = this.candidate;
  }

  /** The in-flight model call's streamed text, from the last `describe()`; none when it arrives in-process. */
  async snapshot(): Promise<LiveSnapshot | undefined> {
    if (!this.description) return undefined;
    const snapshot = await liveSnapshotOf(this.description, this.handle.client.options.loadedDataConverter);
    return snapshot && !this.localCalls.has(snapshot.call) ? snapshot : undefined;
  }

  close(): void {
    this.unwatch?.();
  }
}
