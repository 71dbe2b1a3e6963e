import { randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { isCheckpointId, isContentHash } from './manifest';
import { DEFAULT_CHECKPOINT_LIMITS } from './record';
import { CheckpointMissingError, sha256, type CheckpointStore } from './store';

/**
 * The byte level under a checkpoint store: named objects, written once, read back bounded. A
 * {@link VerifiedStore} (plaintext) or an `EncryptedStore` turns one into a {@link CheckpointStore};
 * the name is always the plaintext's hash, so content-addressed dedupe works whatever the bytes are.
 */
export type ObjectKind = 'blob' | 'manifest';

export interface ObjectStore {
  readonly description: string;
  has(kind: ObjectKind, name: string): Promise<boolean>;
  /** Write-once: when an object of that name exists this does nothing (equal names hold equal plaintext). */
  put(kind: ObjectKind, name: string, bytes: Buffer): Promise<void>;
  /** The object's bytes; `CheckpointMissingError` when there is none; an error when it is over `maxBytes`. */
  get(kind: ObjectKind, name: string, maxBytes: number): Promise<Buffer>;
  /** Every object of a kind with its last write time (garbage collection: src/checkpoints/gc.ts); others are skipped. */
  list(kind: ObjectKind): AsyncIterable<StoredObject>;
  /** Removes the object; absent already is not an error. */
  delete(kind: ObjectKind, name: string): Promise<void>;
}

/** An object as a listing shows it. */
export interface StoredObject {
  name: string;
  /** When it was written (ms since the epoch): what a collection's grace period is measured against. */
  modifiedMs: number;
  size: number;
}

/** A store whose objects can be listed and deleted: what `checkpoints gc` needs beside the reads. */
export interface CollectableStore {
  readonly objects: ObjectStore;
}

/** The largest object a read accepts, per kind, before any decoding. */
export interface ObjectBounds {
  blob: number;
  manifest: number;
}

/**
 * Default read bounds: a blob is at most one recorded file (the default per-file limit); a manifest
 * of the default 100,000 entries is some tens of MB, and 256 MiB leaves room for larger limits.
 */
export const DEFAULT_OBJECT_BOUNDS: ObjectBounds = {
  blob: DEFAULT_CHECKPOINT_LIMITS.maxFileBytes,
  manifest: 256 * 1024 * 1024,
};

export const WHAT: Record<ObjectKind, string> = { blob: 'file content', manifest: 'checkpoint' };

export function checkName(kind: ObjectKind, name: string): void {
  const ok = kind === 'blob' ? isContentHash(name) : isCheckpointId(name);
  if (!ok) throw new Error(`'${String(name).slice(0, 80)}' is not a ${WHAT[kind]} name (64 hex digits).`);
}

export function tooLarge(description: string, kind: ObjectKind, name: string, size: number, max: number): Error {
  return new Error(
    `The checkpoint store ${description} holds ${WHAT[kind]} ${name} of ${size} bytes, over the ${max}-byte bound: refusing to read it.`,
  );
}

/** Plaintext objects checked against their names: the bytes must hash to the name on write and on read. */
export class VerifiedStore implements CheckpointStore {
  readonly description: string;

  constructor(
    readonly objects: ObjectStore,
    private readonly bounds: ObjectBounds = DEFAULT_OBJECT_BOUNDS,
  ) {
    this.description = objects.description;
  }

  hasBlob(hash: string): Promise<boolean> {
    checkName('blob', hash);
    return this.objects.has('blob', hash);
  }

  putBlob(hash: string, data: Buffer): Promise<void> {
    return this.put('blob', hash, data);
  }

  getBlob(hash: string): Promise<Buffer> {
    return this.get('blob', hash);
  }

  putManifest(id: string, bytes: Buffer): Promise<void> {
    return this.put('manifest', id, bytes);
  }

  getManifest(id: string): Promise<Buffer> {
    return this.get('manifest', id);
  }

  private async put(kind: ObjectKind, name: string, bytes: Buffer): Promise<void> {
    checkName(kind, name);
    if (sha256(bytes) !== name) throw new Error(`Refusing to store ${WHAT[kind]} ${name}: its bytes hash otherwise.`);
    await this.objects.put(kind, name, bytes);
  }

  private async get(kind: ObjectKind, name: string): Promise<Buffer> {
    checkName(kind, name);
    const bytes = await this.objects.get(kind, name, this.bounds[kind]);
    if (sha256(bytes) !== name) {
      throw new Error(`The checkpoint store's ${WHAT[kind]} ${name} is corrupt or was altered (its hash differs).`);
    }
    return bytes;
  }
}

/**
 * Objects in a directory, in the embedded `DirectoryStore`'s layout (`blobs/ab/<hash>`,
 * `manifests/<id>.json`), so an encrypted store over the same directory still reads what was stored
 * before encryption was turned on. Written to a temporary name and renamed into place.
 */
export class DirectoryObjects implements ObjectStore {
  readonly description: string;

  constructor(readonly root: string) {
    this.description = `directory ${root}`;
  }

  private file(kind: ObjectKind, name: string): string {
    checkName(kind, name);
    return kind === 'blob'
      ? path.join(this.root, 'blobs', name.slice(0, 2), name)
      : path.join(this.root, 'manifests', `${name}.json`);
  }

  async has(kind: ObjectKind, name: string): Promise<boolean> {
    try {
      await fs.access(this.file(kind, name));
      return true;
    } catch {
      return false;
    }
  }

  async put(kind: ObjectKind, name: string, bytes: Buffer): Promise<void> {
    const target = this.file(kind, name);
    if (await this.has(kind, name)) return;
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const temp = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    const handle = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    try {
      await handle.writeFile(bytes);
      if (kind === 'manifest') await handle.sync();
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

  async *list(kind: ObjectKind): AsyncGenerator<StoredObject> {
    const top = path.join(this.root, kind === 'blob' ? 'blobs' : 'manifests');
    // Blobs sit one level down (`blobs/ab/<hash>`), manifests at the top (`manifests/<id>.json`).
    const dirs =
      kind === 'blob'
        ? (await entriesOf(top)).filter((d) => /^[0-9a-f]{2}$/.test(d)).map((d) => path.join(top, d))
        : [top];
    for (const dir of dirs) {
      for (const entry of await entriesOf(dir)) {
        const name = kind === 'manifest' ? entry.replace(/\.json$/, '') : entry;
        if (
          (kind === 'manifest' && !entry.endsWith('.json')) ||
          !(kind === 'blob' ? isContentHash(name) : isCheckpointId(name))
        )
          continue;
        const stat = await fs.lstat(path.join(dir, entry)).catch(() => undefined);
        if (stat?.isFile()) yield { name, modifiedMs: stat.mtimeMs, size: stat.size };
      }
    }
  }

  async delete(kind: ObjectKind, name: string): Promise<void> {
    await fs.unlink(this.file(kind, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  async get(kind: ObjectKind, name: string, maxBytes: number): Promise<Buffer> {
    const file = this.file(kind, name);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new CheckpointMissingError(WHAT[kind], name);
      throw error;
    }
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw tooLarge(this.description, kind, name, size, maxBytes);
      const buffer = Buffer.alloc(size + 1);
      let read = 0;
      while (read < buffer.length) {
        const { bytesRead } = await handle.read(buffer, read, buffer.length - read, read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      if (read > maxBytes) throw tooLarge(this.description, kind, name, read, maxBytes);
      return buffer.subarray(0, read);
    } finally {
      await handle.close();
    }
  }
}

/**
 * The embedded store: a directory on the worker's host (`blobs/ab/<hash>`, `manifests/<id>.json`), written
 * write-once through a temporary name and verified on read. Manifests are synced to disk before they are
 * renamed; contents are not (one sync per file would cost more than the rest of a checkpoint), so after a
 * host crash a content may read as corrupt, and a restore that needs it fails saying so.
 */
export class DirectoryStore extends VerifiedStore {
  constructor(readonly root: string) {
    super(new DirectoryObjects(root));
  }
}

async function entriesOf(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
