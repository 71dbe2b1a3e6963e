import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RestoreRefused, storeFromEnv, WorkerCheckpoints, type CheckpointStore } from '../checkpoints';
import type { WorkerCheckpointsOptions } from '../checkpoints';
import type { CheckpointRef } from '../shared/checkpoints';
import type { PrepareRunInput, RunToolInput, RunToolOutput } from '../shared/activity-io';
import { ErrorTypes } from '../shared/constants';

/**
 * Workspace checkpoints in the activities that run a turn's tools and a run's start
 * (docs/checkpoints.md): no activity of their own, nothing in history but the reference.
 * - before a tool call: a turn left pending here is recorded first, and a workspace this worker did
 *   not record the run's last checkpoint of is compared with it (restored when missing or empty);
 * - after a call that may have changed files (a mutating tool, whatever its result): the turn's checkpoint;
 * - at run start: `restoreFrom` into the empty workspace, then turn 0.
 */

/** What a worker's checkpoints are set from: `false` (off), a store, a setting as the environment's, or full options. */
export type CheckpointsOption = false | string | CheckpointStore | WorkerCheckpointsOptions;

/** The worker's checkpoints from its option, else from `DURABLE_AGENT_CHECKPOINTS` (default on). */
export function workerCheckpoints(
  option: CheckpointsOption | WorkerCheckpoints | undefined,
): WorkerCheckpoints | undefined {
  if (option instanceof WorkerCheckpoints) return option;
  if (option === false) return undefined;
  if (option === undefined || typeof option === 'string') {
    const store = storeFromEnv(
      option === undefined ? process.env : { ...process.env, DURABLE_AGENT_CHECKPOINTS: option },
    );
    return store ? new WorkerCheckpoints({ store }) : undefined;
  }
  if ('store' in option && typeof (option as WorkerCheckpointsOptions).store === 'object') {
    return new WorkerCheckpoints(option as WorkerCheckpointsOptions);
  }
  return new WorkerCheckpoints({ store: option as CheckpointStore });
}

export interface BeforeCall {
  /** Fields for the call's result (a pending checkpoint that landed, a divergence, a restore). */
  fields: Pick<RunToolOutput, 'landed' | 'workspaceDiverged' | 'workspaceRestored'>;
  /** A line for the model, appended to the call's result. */
  note?: string;
}

export function createCheckpointSteps(checkpoints: WorkerCheckpoints | undefined) {
  /**
   * A run whose last checkpoint names a workspace this worker does not have (another machine wrote it):
   * the directory is created (its parent must exist) so the checkpoint can be restored into it. The
   * worker's workspace rules are checked on it afterwards, as for every call.
   */
  async function ensureWorkspace(input: RunToolInput, workspace: string | undefined): Promise<void> {
    if (!checkpoints || !input.lastCheckpointId || !workspace || !path.isAbsolute(workspace)) return;
    await fs.mkdir(workspace, { mode: 0o700 }).catch(() => undefined);
  }

  async function beforeCall(input: RunToolInput, workspace: string): Promise<BeforeCall> {
    if (!checkpoints || input.turn === undefined) return { fields: {} };
    const landed = await checkpoints.retryPending(workspace);
    const check = await checkpoints.checkBeforeCall(workspace, input.lastCheckpointId, input.checkpointIgnore);
    const fields: BeforeCall['fields'] = {
      ...(landed ? { landed } : {}),
      ...(check.diverged ? { workspaceDiverged: check.diverged } : {}),
      ...(check.restored !== undefined ? { workspaceRestored: check.restored } : {}),
    };
    let note: string | undefined;
    if (check.diverged) {
      const shown = check.diverged.paths.slice(0, 5).join(', ');
      note =
        `[workspace] This worker's copy of the workspace differs from the run's last checkpoint in ${check.diverged.count} ` +
        `path(s) (${shown}${check.diverged.count > 5 ? ', …' : ''}); it was kept as it is. Re-read files before editing them.`;
    } else if (check.unchecked) {
      console.warn(
        `durable-agent: the workspace ${workspace} was not compared with its run's last checkpoint: ${check.unchecked}`,
      );
    }
    return { fields, ...(note ? { note } : {}) };
  }

  /** After a call: the turn's checkpoint when the call may have changed files. */
  async function afterCall(
    input: RunToolInput,
    workspace: string,
    /** The tool's class (an MCP tool's `idempotent` may write too); undefined: no such tool, nothing ran. */
    sideEffect: string | undefined,
    ran: boolean,
  ): Promise<CheckpointRef | undefined> {
    if (!checkpoints || input.turn === undefined || !ran || sideEffect === undefined || sideEffect === 'read_only') {
      return undefined;
    }
    return checkpoints.record(workspace, input.turn, {
      ...(input.lastCheckpointId ? { baseId: input.lastCheckpointId } : {}),
      ...(input.checkpointIgnore ? { runIgnore: input.checkpointIgnore } : {}),
    });
  }

  /** Run start: `restoreFrom` into the empty workspace, then turn 0 (the workspace as the run found it). */
  async function atRunStart(input: PrepareRunInput, workspace: string): Promise<CheckpointRef | undefined> {
    const restoreFrom = input.restoreFrom?.checkpointId;
    if (restoreFrom !== undefined) {
      if (!checkpoints) {
        throw ApplicationFailure.nonRetryable(
          'restoreFrom needs checkpoints, and this worker has them off (DURABLE_AGENT_CHECKPOINTS=off).',
          ErrorTypes.WorkspaceRefused,
        );
      }
      try {
        await checkpoints.restoreAtStart(workspace, restoreFrom, input.checkpointIgnore);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        // A refused workspace or a checkpoint that is not there: the run fails at start, saying why.
        if (error instanceof RestoreRefused || /no checkpoint|malformed|not JSON/.test(message)) {
          throw ApplicationFailure.nonRetryable(`restoreFrom: ${message}`, ErrorTypes.WorkspaceRefused);
        }
        throw error;
      }
    }
    if (!checkpoints) return undefined;
    return checkpoints.record(workspace, 0, input.checkpointIgnore ? { runIgnore: input.checkpointIgnore } : {});
  }

  return { ensureWorkspace, beforeCall, afterCall, atRunStart, enabled: checkpoints !== undefined };
}

export type CheckpointSteps = ReturnType<typeof createCheckpointSteps>;
