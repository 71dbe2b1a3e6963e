import { createHash } from 'node:crypto';

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
