import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { MAX_PROMPT_BYTES, utf8Length } from '../shared';

/** A prompt the CLI refuses before starting anything (exit code 2, no usage text). */
export class PromptRefused extends Error {
  override name = 'PromptRefused';
}

const nf = new Intl.NumberFormat('en-US');

function tooLarge(bytes: string): PromptRefused {
  return new PromptRefused(
    `the prompt is ${bytes} bytes; a run's prompt may be at most ${nf.format(MAX_PROMPT_BYTES)} bytes ` +
      `(${MAX_PROMPT_BYTES / 1024} KiB, MAX_PROMPT_BYTES: the prompt is part of the run's input and of every ` +
      'compacted conversation, which Temporal caps at 2 MiB). Put large material in a file in the workspace ' +
      'and ask the agent to read it.',
  );
}

/** Refuses a prompt larger than MAX_PROMPT_BYTES (UTF-8), naming the limit. */
export function checkPromptSize(prompt: string): void {
  const bytes = utf8Length(prompt);
  if (bytes > MAX_PROMPT_BYTES) throw tooLarge(nf.format(bytes));
}

/**
 * Reads a prompt from a stream, stopping as soon as it exceeds MAX_PROMPT_BYTES: a huge file or an
 * endless pipe is refused without being read whole.
 */
export async function readBoundedPrompt(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.length;
    if (bytes > MAX_PROMPT_BYTES) {
      stream.destroy();
      throw tooLarge(`more than ${nf.format(MAX_PROMPT_BYTES)}`);
    }
    chunks.push(buffer);
  }
  // A byte-order mark is not part of the text.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

/** `--prompt-file F`: the prompt from file F, or from standard input for `-`. */
export async function readPromptFile(source: string, stdin: Readable = process.stdin): Promise<string> {
  if (source === '-') return readBoundedPrompt(stdin);
  const stream = createReadStream(source);
  try {
    return await readBoundedPrompt(stream);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new PromptRefused(`--prompt-file: no such file: ${source}`);
    if (code === 'EISDIR') throw new PromptRefused(`--prompt-file: ${source} is a directory, not a file`);
    if (code === 'EACCES') throw new PromptRefused(`--prompt-file: permission denied: ${source}`);
    throw e;
  }
}
