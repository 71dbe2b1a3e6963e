import { createHash, randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isCheckpointId, isContentHash } from './manifest';

/**
 * Where checkpoints live: file contents by hash ("blobs") and manifests by id. Every store is
 * content-addressed and write-once: a blob or manifest that exists is never rewritten, so two workers
 * recording the same content at once agree, and a retried upload is harmless.
 *
 * Reads verify what they read (a blob's bytes must hash to its name), so a store that was tampered
 * with or torn can make a restore fail, never restore wrong contents.
 */
export interface CheckpointStore {
  /** Shown in messages and `status` (`directory /var/lib/…`, `s3://bucket/prefix`). */
  readonly description: string;
  hasBlob(hash: string): Promise<boolean>;
  /** Store `data` under `hash`; the store checks that it hashes to `hash`. */
  putBlob(hash: string, data: Buffer): Promise<void>;
  /** The blob's bytes (verified), or an error naming the missing hash. */
  getBlob(hash: string): Promise<Buffer>;
  putManifest(id: string, bytes: Buffer): Promise<void>;
  getManifest(id: string): Promise<Buffer>;
}

export class CheckpointMissingError extends Error {
  constructor(
    what: string,
    readonly id: string,
  ) {
    super(`The checkpoint store has no ${what} ${id}.`);
    this.name = 'CheckpointMissingError';
  }
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function checkHash(hash: string): void {
  if (!isContentHash(hash)) throw new Error(`'${String(hash).slice(0, 80)}' is not a content hash (64 hex digits).`);
}

function checkId(id: string): void {
  if (!isCheckpointId(id)) throw new Error(`'${String(id).slice(0, 80)}' is not a checkpoint id (64 hex digits).`);
}

/**
 * The embedded store: a directory on the worker's host (`blobs/ab/<hash>`, `manifests/<id>.json`).
 * Writes go to a temporary name and are renamed into place, so a worker killed mid-write leaves no
 * torn object under a real name (only a `.tmp-*` file). Manifests are synced to disk before they are
 * renamed; contents are not (one sync per file would cost more than the rest of a checkpoint), so
 * after a host crash a content may read as corrupt, and a restore that needs it fails saying so.
 */
export class DirectoryStore implements CheckpointStore {
  readonly description: string;

  constructor(readonly root: string) {
    this.description = `directory ${root}`;
  }

  private blobPath(hash: string): string {
    return path.join(this.root, 'blobs', hash.slice(0, 2), hash);
  }

  private manifestPath(id: string): string {
    return path.join(this.root, 'manifests', `${id}.json`);
  }

  async hasBlob(hash: string): Promise<boolean> {
    checkHash(hash);
    return exists(this.blobPath(hash));
  }

  async putBlob(hash: string, data: Buffer): Promise<void> {
    checkHash(hash);
    if (sha256(data) !== hash) throw new Error(`Refusing to store a blob under ${hash}: its content hashes otherwise.`);
    await writeOnce(this.blobPath(hash), data, false);
  }

  async getBlob(hash: string): Promise<Buffer> {
    checkHash(hash);
    const data = await readOrMissing(this.blobPath(hash), 'file content', hash);
    if (sha256(data) !== hash) throw new Error(`The checkpoint store's content ${hash} is corrupt (its hash differs).`);
    return data;
  }

  async putManifest(id: string, bytes: Buffer): Promise<void> {
    checkId(id);
    if (sha256(bytes) !== id) throw new Error(`Refusing to store a manifest under ${id}: its bytes hash otherwise.`);
    await writeOnce(this.manifestPath(id), bytes, true);
  }

  async getManifest(id: string): Promise<Buffer> {
    checkId(id);
    const bytes = await readOrMissing(this.manifestPath(id), 'checkpoint', id);
    if (sha256(bytes) !== id) throw new Error(`The checkpoint store's manifest ${id} is corrupt (its hash differs).`);
    return bytes;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

async function readOrMissing(p: string, what: string, id: string): Promise<Buffer> {
  try {
    return await fs.readFile(p);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CheckpointMissingError(what, id);
    throw error;
  }
}

/** Write `data` at `target` unless something is there already; never a torn file under the real name. */
async function writeOnce(target: string, data: Buffer, sync: boolean): Promise<void> {
  if (await exists(target)) return;
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const temp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
  const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    await handle.writeFile(data);
    if (sync) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temp, target);
  } catch (error) {
    await fs.unlink(temp).catch(() => undefined);
    throw error;
  }
}
