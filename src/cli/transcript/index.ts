import type { Client } from '@temporalio/client';
import { inertJson, visibleText } from '../terminal-text';
import { executionRecords, firstRunId } from './history';
import type { Write } from './markdown';
import { TranscriptBuilder, type Transcript } from './rebuild';
import { ChildRecords, readTree } from './subagents';
import { renderTree } from './subagents-markdown';

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

/**
 * `durable-agent transcript <id> [--json]`: Markdown for people, or JSON for programs (the shape
 * in docs/transcript.md). Written in pieces through `write`. Returns the exit code; an unknown
 * run throws `WorkflowNotFoundError` (the CLI prints one line and exits 1).
 */
export async function transcriptCommand(
  client: Client,
  id: string,
  options: { json: boolean },
  write: Write,
): Promise<number> {
  const transcript = await readTranscript(client, id);
  if (options.json) await writeJson(transcript, (chunk) => write(inertJson(chunk)));
  // Markdown is read on a terminal too: what the model and its tools wrote is made inert there.
  else await renderTree(transcript, (chunk) => write(visibleText(chunk)));
  return 0;
}

/** Writes to standard output, waiting for a full pipe to drain, so a long transcript is not queued in memory. */
export function stdoutWriter(out: NodeJS.WritableStream = process.stdout): Write {
  return (chunk) => (out.write(chunk) ? undefined : new Promise((resolve) => out.once('drain', resolve)));
}

/** The transcript as one JSON document, written a message at a time. */
export async function writeJson(t: Transcript, write: Write): Promise<void> {
  const { messages, ...rest } = t;
  const head = JSON.stringify({ ...rest, messageCount: messages.length });
  await write(`${head.slice(0, -1)},"messages":[`);
  for (let i = 0; i < messages.length; i++) await write(`${i === 0 ? '\n' : ',\n'}${JSON.stringify(messages[i])}`);
  await write('\n]}\n');
}
