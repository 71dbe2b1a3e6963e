import { createWriteStream, mkdirSync, promises as fs, type WriteStream } from 'node:fs';
import * as path from 'node:path';

/**
 * Large tool outputs are spilled to a file in the workspace: the model sees a bounded part and is
 * told where the rest is, so it can page through it with read_file or grep. History and the
 * model's context only ever hold the bounded part.
 */
export const SPILL_DIR = path.join('.durable-agent', 'spill');
/** A spill file stops growing here; a command printing without end must not fill the disk. */
export const MAX_SPILL_BYTES = 64 * 1024 * 1024;

function spillName(toolUseId: string, ext: string): string {
  // Tool use ids come from the model's API response; keep the file name safe whatever they hold.
  return `${toolUseId.replace(/[^A-Za-z0-9_-]/g, '_') || 'output'}.${ext}`;
}

/** Writes a whole text to a spill file and returns its workspace-relative path. */
export async function spillText(workspace: string, toolUseId: string, text: string): Promise<string> {
  const relative = path.join(SPILL_DIR, spillName(toolUseId, 'txt'));
  await fs.mkdir(path.join(workspace, SPILL_DIR), { recursive: true });
  await fs.writeFile(path.join(workspace, relative), text.slice(0, MAX_SPILL_BYTES));
  return relative;
}

/** A spill file written as output streams in (bash), opened only when the output overflows. */
export class StreamingSpill {
  private stream: WriteStream | undefined;
  private written = 0;
  readonly relativePath: string;

  constructor(
    private readonly workspace: string,
    toolUseId: string,
  ) {
    this.relativePath = path.join(SPILL_DIR, spillName(toolUseId, 'log'));
  }

  get started(): boolean {
    return this.stream !== undefined;
  }

  write(text: string): void {
    if (!this.stream) {
      const dir = path.join(this.workspace, SPILL_DIR);
      // Synchronous so the stream exists before this (synchronous) write returns; it happens once.
      mkdirSync(dir, { recursive: true });
      this.stream = createWriteStream(path.join(this.workspace, this.relativePath));
    }
    if (this.written >= MAX_SPILL_BYTES) return;
    const part = text.slice(0, MAX_SPILL_BYTES - this.written);
    this.written += part.length;
    this.stream.write(part);
  }

  /** True when the spill hit MAX_SPILL_BYTES and later output was dropped. */
  get capped(): boolean {
    return this.written >= MAX_SPILL_BYTES;
  }

  async close(): Promise<void> {
    const stream = this.stream;
    if (!stream) return;
    await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}
