import type { Client } from '@temporalio/client';
import type { CheckpointRef } from '../../shared/checkpoints';
import type { Message } from '../../shared/messages';
import { executionRecords, firstRunId, type HistoryRecord } from '../transcript/history';
import { TranscriptBuilder, type Transcript } from '../transcript/rebuild';
import { asCheckpointRef, asksForWrites, turnWinners, type RunTurns } from './turns';

/**
 * A run's checkpoints and conversation read from its event history, across continue-as-new (each
 * execution after the first is read by following its predecessor's ContinuedAsNew event). Needs the
 * Temporal server only, no worker, as `transcript` does.
 */
export interface RunHistory extends RunTurns {
  workflowId: string;
  /** The first execution's run id: the origin a fork records. */
  firstRunId: string;
  /** The latest execution's run id. */
  lastRunId: string;
  /** True while the latest execution is open. */
  open: boolean;
  /** The run's input as it started (the first execution's). */
  input: Record<string, unknown> | undefined;
  /** The workspace's real path as the worker admitted it at run start, when history holds it. */
  workspace: string | undefined;
  transcript: Transcript;
  /** Index in `transcript.messages` of each turn's answer (turn N at N - 1). */
  answers: ReadonlyArray<number | undefined>;
  /** Every ref history holds (the winners are in `winners`). */
  refs: CheckpointRef[];
}

/** Activities whose results carry a checkpoint ref (`checkpoint`, or `prepared.checkpoint` at run start). */
const RECORDING_ACTIVITIES = new Set(['runTool', 'prepareRun', 'firstModelCall']);

export async function readRunHistory(client: Client, workflowId: string): Promise<RunHistory> {
  const builder = new TranscriptBuilder(workflowId);
  const refs: CheckpointRef[] = [];
  const first = await firstRunId(client, workflowId);
  let input: Record<string, unknown> | undefined;
  let workspace: string | undefined;
  let lastRunId = first;
  const seen = new Set<string>();
  let runId: string | undefined = first;
  while (runId && !seen.has(runId)) {
    seen.add(runId);
    lastRunId = runId;
    let next: string | undefined;
    for await (const record of executionRecords(client, workflowId, runId)) {
      if (record.kind === 'continued_as_new') next = record.newRunId || undefined;
      if (record.kind === 'execution_started' && input === undefined) input = objectOf(record.input);
      collect(record, refs, (w) => (workspace ??= w));
      builder.add(record);
    }
    runId = next;
  }
  const transcript = builder.transcript;
  const answers = builder.answers;
  const mutatingTurns = new Set<number>();
  answers.forEach((at, i) => {
    // An answer history could not place is not known to be read-only.
    if (at === undefined || asksForWrites(transcript.messages[at] as Message | undefined)) mutatingTurns.add(i + 1);
  });
  return {
    workflowId,
    firstRunId: first,
    lastRunId,
    open: transcript.status === 'running',
    input,
    workspace,
    transcript,
    answers,
    refs,
    winners: turnWinners(refs),
    lastTurn: answers.length,
    mutatingTurns,
  };
}

function collect(record: HistoryRecord, refs: CheckpointRef[], onWorkspace: (path: string) => void): void {
  if (record.kind !== 'activity_completed' && record.kind !== 'local_activity_completed') return;
  if (!RECORDING_ACTIVITIES.has(record.activityType)) return;
  const out = objectOf(record.result);
  const prepared = objectOf(out?.['prepared']);
  for (const holder of [out, prepared]) {
    // `landed`: an earlier turn's pending checkpoint, recorded before this call ran.
    for (const key of ['checkpoint', 'landed']) {
      const ref = asCheckpointRef(holder?.[key]);
      if (ref) refs.push(ref);
    }
  }
  if (record.activityType !== 'runTool') {
    const path = (prepared ?? out)?.['workspace'];
    if (typeof path === 'string' && path.startsWith('/')) onWorkspace(path);
  }
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
