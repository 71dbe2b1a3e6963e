import type { Client } from '@temporalio/client';
import { inertJson, visibleText } from '../terminal-text';
import { readTranscript, type Transcript } from '../../client/transcript';
import type { Write } from './markdown';
import { renderTree } from './subagents-markdown';

export {
  readTranscript,
  type Transcript,
  type TranscriptCompaction,
  type TranscriptExecution,
  type TranscriptSubagent,
} from '../../client/transcript';

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
