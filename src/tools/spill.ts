import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { createFresh, replaceFile, withLocated, locate, type LocateOptions } from '../safe-fs';

/**
 * Large tool outputs are spilled to a file in the workspace: the model sees a bounded part and is
 * told where the rest is, so it can page through it with read_file or grep. History and the
 * model's context only ever hold the bounded part.
 *
 * The spill folder goes through the same confined path walk as the file tools, stricter still: no
 * symlink is followed anywhere on `.durable-agent/spill/<id>`, a spill file replaces whatever had
 * its name (never written through), and a failure to spill is reported, never thrown.
 */
export const SPILL_DIR = path.join('.durable-agent', 'spill');
/** A spill file stops growing here; a command printing without end must not fill the disk. */
export const MAX_SPILL_BYTES = 64 * 1024 * 1024;

const SPILL_WALK: LocateOptions = { createDirs: true, followLinks: false };

function spillName(toolUseId: string, ext: string): string {
  // Tool use ids come from the model's API response; keep the file name safe whatever they hold.
  return `${
    String(toolUseId)
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(0, 200) || 'output'
  }.${ext}`;
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Writes a whole text to a spill file and returns its workspace-relative path. Rejects (with a
 * message fit for the model) when it cannot; callers turn that into a note — see {@link trySpillText}.
 */
export async function spillText(workspace: string, toolUseId: string, text: string): Promise<string> {
  const relative = path.join(SPILL_DIR, spillName(toolUseId, 'txt'));
  const bytes = Buffer.from(text, 'utf8');
  await withLocated(workspace, relative, SPILL_WALK, (located) =>
    replaceFile(located, bytes.length > MAX_SPILL_BYTES ? bytes.subarray(0, MAX_SPILL_BYTES) : bytes),
  );
  return relative;
}

/** {@link spillText} that never rejects: the path, or why the output could not be saved. */
export async function trySpillText(
  workspace: string,
  toolUseId: string,
  text: string,
): Promise<{ path: string } | { error: string }> {
  try {
    return { path: await spillText(workspace, toolUseId, text) };
  } catch (error) {
    return { error: `The full output could not be saved to ${SPILL_DIR}: ${reason(error)}` };
  }
}

/**
 * A spill file written as output streams in (bash), opened only when the output overflows.
 * `write` is synchronous and never throws; the file is opened and written asynchronously in order,
 * and any failure is kept in {@link StreamingSpill.error} instead of surfacing as an 'error' event.
 */
export class StreamingSpill {
  private chain: Promise<FileHandle | undefined> | undefined;
  private written = 0;
  private failure: string | undefined;
  readonly relativePath: string;

  constructor(
    private readonly workspace: string,
    toolUseId: string,
  ) {
    this.relativePath = path.join(SPILL_DIR, spillName(toolUseId, 'log'));
  }

  /** True once output was written to the spill and nothing has failed (so far; final after close()). */
  get started(): boolean {
    return this.chain !== undefined && this.failure === undefined;
  }

  /** Why the spill could not be written, as a sentence for the model; undefined while all is well. */
  get error(): string | undefined {
    return this.failure === undefined
      ? undefined
      : `The full output could not be saved to ${this.relativePath}: ${this.failure}`;
  }

  write(text: string): void {
    if (this.failure !== undefined || this.written >= MAX_SPILL_BYTES) return;
    // Counted in bytes, as written: characters would let three-byte text make the file three times larger.
    const bytes = Buffer.from(text, 'utf8');
    const part =
      bytes.length > MAX_SPILL_BYTES - this.written ? bytes.subarray(0, MAX_SPILL_BYTES - this.written) : bytes;
    this.written += part.length;
    this.chain ??= this.open();
    this.chain = this.chain.then(async (handle) => {
      if (handle && this.failure === undefined) await handle.write(part).catch((e: unknown) => this.fail(e));
      return handle;
    });
  }

  private async open(): Promise<FileHandle | undefined> {
    const located = await locate(this.workspace, this.relativePath, SPILL_WALK).catch((e: unknown) => this.fail(e));
    if (!located) return undefined;
    try {
      return await createFresh(located);
    } catch (error) {
      return this.fail(error);
    } finally {
      await located.close();
    }
  }

  private fail(error: unknown): undefined {
    this.failure ??= reason(error);
    return undefined;
  }

  /** True when the spill hit MAX_SPILL_BYTES and later output was dropped. */
  get capped(): boolean {
    return this.written >= MAX_SPILL_BYTES;
  }

  /** Finish writing and close the file. Never rejects; check {@link error} afterwards. */
  async close(): Promise<void> {
    const handle = await this.chain?.catch((e: unknown) => this.fail(e));
    await handle?.close().catch((e: unknown) => this.fail(e));
  }
}
