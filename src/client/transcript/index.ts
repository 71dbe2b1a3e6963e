import type { Client } from '@temporalio/client';
import { executionRecords, firstRunId } from './history';
import { TranscriptBuilder, type Transcript } from './rebuild';
import { ChildRecords, readTree } from './subagents';

export type { Transcript, TranscriptCompaction, TranscriptExecution } from './rebuild';
export type { TranscriptSubagent } from './subagents';

/**
 * A run's whole conversation from its event history, across continue-as-new: needs the Temporal
 * server only, no worker. Executions are read one after another, following each
 * ContinuedAsNew event from the first execution of the run's newest chain.
 */
export async function readTranscript(client: Client, workflowId: string): Promise<Transcript> {
  return readTree((id) => readRun(client, id), workflowId);
}

/** One run's transcript, and the child runs its history shows it started (subagents). */
async function readRun(client: Client, workflowId: string) {
  const builder = new TranscriptBuilder(workflowId);
  const children = new ChildRecords();
  const seen = new Set<string>();
  let runId: string | undefined = await firstRunId(client, workflowId);
  while (runId && !seen.has(runId)) {
    seen.add(runId);
    let next: string | undefined;
    for await (const record of executionRecords(client, workflowId, runId)) {
      if (record.kind === 'continued_as_new') next = record.newRunId || undefined;
      builder.add(record);
      children.add(record);
    }
    runId = next;
  }
  return { transcript: builder.transcript, children };
}
