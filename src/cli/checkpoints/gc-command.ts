import type { Client } from '@temporalio/client';
import { collectGarbage, isCollectable, parseDuration, type GcReport } from '../../checkpoints/gc';
import { isCheckpointIdText } from '../../shared/checkpoint-id';
import { WORKFLOW_TYPE } from '../../shared/constants';
import { CheckpointUnavailable } from '../cli-errors';
import { UsageError } from '../flags';
import { inertJson } from '../terminal-text';
import { executionRecords } from '../../client/transcript/history';
import { readRunHistory } from '../../client/checkpoints/run-history';
import { cliStore } from './store';
import { asCheckpointRef } from '../../client/checkpoints/turns';

/** The shortest grace `--older-than` takes: a recording in progress has uploaded contents its manifest does not name yet. */
export const MIN_GC_AGE_MS = 60 * 60 * 1000;

export interface GcFlags {
  olderThan: string;
  dryRun: boolean;
  json: boolean;
}

/** Every checkpoint id the runs that must keep theirs reference, and how many runs that was. */
export async function referencedCheckpoints(client: Client, cutoffMs: number) {
  const keep = new Set<string>();
  const since = new Date(cutoffMs).toISOString();
  // Open runs (every execution of their chain) and executions closed after the cutoff, subagents and forks included.
  const query = `WorkflowType = '${WORKFLOW_TYPE}' AND (ExecutionStatus = 'Running' OR CloseTime > '${since}')`;
  let runs = 0;
  let open = 0;
  for await (const info of client.workflow.list({ query })) {
    runs += 1;
    if (info.status.name === 'RUNNING') {
      open += 1;
      const history = await readRunHistory(client, info.workflowId);
      for (const ref of history.refs) if (ref.id) keep.add(ref.id);
      addInputRefs(history.input, keep);
      continue;
    }
    for await (const record of executionRecords(client, info.workflowId, info.runId)) {
      if (record.kind === 'execution_started') addInputRefs(record.input, keep);
      if (record.kind !== 'activity_completed' && record.kind !== 'local_activity_completed') continue;
      const out = record.result as Record<string, unknown> | undefined;
      for (const holder of [out, out?.['prepared'] as Record<string, unknown> | undefined]) {
        for (const key of ['checkpoint', 'landed']) {
          const ref = asCheckpointRef(holder?.[key]);
          if (ref?.id) keep.add(ref.id);
        }
      }
    }
  }
  return { keep, runs, open, query };
}

/** A start input's `restoreFrom` and the checkpoints a continued execution carries (`resume.checkpoints`). */
function addInputRefs(input: unknown, keep: Set<string>): void {
  const run = input as { restoreFrom?: { checkpointId?: unknown }; resume?: { checkpoints?: unknown } } | undefined;
  const restored = run?.restoreFrom?.checkpointId;
  if (isCheckpointIdText(restored)) keep.add(restored);
  const carried = run?.resume?.checkpoints;
  if (Array.isArray(carried)) {
    for (const c of carried) {
      const id = (c as { id?: unknown } | null)?.id;
      if (isCheckpointIdText(id)) keep.add(id);
    }
  }
}

/** `durable-agent checkpoints gc --older-than DURATION [--dry-run] [--json]`. */
export async function gcCommand(client: Client, flags: GcFlags, say: (line: string) => void): Promise<number> {
  const age = parseDuration(flags.olderThan);
  if (age === undefined) {
    throw new UsageError(
      `--older-than takes a whole number and a unit (s, m, h, d, w), such as 30d or 12h; got '${flags.olderThan.slice(0, 40)}'`,
      'checkpoints',
    );
  }
  if (age < MIN_GC_AGE_MS) {
    throw new UsageError(
      '--older-than must be at least 1h: a checkpoint being recorded has contents its manifest does not name yet',
      'checkpoints',
    );
  }
  const store = cliStore();
  if (!isCollectable(store)) throw new CheckpointUnavailable(`the store ${store.description} cannot list its objects`);
  const cutoffMs = Date.now() - age;
  const { keep, runs, open } = await referencedCheckpoints(client, cutoffMs);
  const report = await collectGarbage({ store, keep, cutoffMs, dryRun: flags.dryRun });
  if (flags.json)
    say(inertJson(JSON.stringify({ store: store.description, runs, openRuns: open, ...report }, null, 2)));
  else for (const line of describeReport(store.description, runs, open, report, flags.dryRun)) say(line);
  return 0;
}

function describeReport(store: string, runs: number, open: number, r: GcReport, dryRun: boolean): string[] {
  const verb = dryRun ? 'would delete' : 'deleted';
  return [
    `${store}: ${runs} run execution(s) open or closed within the period (${open} open) reference checkpoints`,
    `checkpoints: kept ${r.manifests.kept}, ${verb} ${r.manifests.deleted}`,
    `contents: kept ${r.contents.kept}, ${verb} ${r.contents.deleted} (${r.contents.bytesDeleted} bytes)`,
    ...(r.missing.length ? [`note: ${r.missing.length} referenced checkpoint(s) are not in this store`] : []),
    ...r.unreadable.map(
      (u) => `warning: checkpoint ${u.id.slice(0, 12)} could not be read (${u.error}): no contents were deleted`,
    ),
  ];
}
