import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectoryStore, S3Objects, VerifiedStore, serializeManifest, type Manifest } from '../../src/checkpoints';
import { collectGarbage, parseDuration } from '../../src/checkpoints/gc';
import { sha256 } from '../../src/checkpoints/store';
import type { CollectableStore } from '../../src/checkpoints/objects';
import type { CheckpointStore } from '../../src/checkpoints';
import {
  ACCESS_KEY,
  SECRET_KEY,
  describeWithSeaweedfs,
  startSeaweedfs,
  type SeaweedServer,
} from '../support/seaweedfs';

/**
 * `checkpoints gc`'s mark and sweep over a real store: what a kept checkpoint names stays, recent objects
 * stay, the rest goes; against the directory store and a real S3-compatible server (SeaweedFS).
 */
jest.setTimeout(180_000);

type Store = CheckpointStore & CollectableStore;

/** A checkpoint of `files` (name → content) in the store; its id and its contents' hashes. */
async function checkpoint(store: Store, files: Record<string, string>) {
  const entries: Manifest['entries'] = [];
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.from(content);
    const hash = sha256(data);
    await store.putBlob(hash, data);
    entries.push({ kind: 'file', path: name, hash, size: data.length, mode: 0o644, mtimeMs: 1, ctimeMs: 1, ino: 1 });
  }
  const { bytes, id } = serializeManifest({ version: 1, entries, omitted: [], scannedAt: 1 });
  await store.putManifest(id, bytes);
  return { id, hashes: entries.map((e) => (e as { hash: string }).hash) };
}

async function names(store: Store, kind: 'blob' | 'manifest'): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.objects.list(kind)) out.push(o.name);
  return out.sort();
}

/** Kept: `kept` and what it names, `shared` (named by both); deleted: `dropped` and its own content. */
async function scenario(store: Store, cutoffMs: () => number) {
  const kept = await checkpoint(store, { 'a.txt': 'kept', 'b.txt': 'shared' });
  const dropped = await checkpoint(store, { 'c.txt': 'dropped', 'b.txt': 'shared' });
  const report = await collectGarbage({ store, keep: new Set([kept.id, 'f'.repeat(64)]), cutoffMs: cutoffMs() });
  expect(report.manifests).toEqual({ kept: 1, deleted: 1 });
  expect(report.contents).toMatchObject({ kept: 2, deleted: 1, bytesDeleted: 'dropped'.length });
  expect(report.missing).toEqual(['f'.repeat(64)]);
  expect(await names(store, 'manifest')).toEqual([kept.id]);
  expect(await names(store, 'blob')).toEqual([...kept.hashes].sort());
  expect(dropped.hashes.filter((h) => !kept.hashes.includes(h))).toHaveLength(1);
  // What is kept still reads back verified.
  for (const h of kept.hashes) expect((await store.getBlob(h)).length).toBeGreaterThan(0);
}

test('directory store: old unreferenced checkpoints and contents go, referenced and recent ones stay', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'da-gc-'));
  try {
    const store = new DirectoryStore(dir);
    const old = Date.now() / 1000 - 3600;
    await scenario(store, () => Date.now() + 1000);
    // Everything just written is recent: a dry run with a past cutoff deletes nothing.
    const fresh = await checkpoint(store, { 'd.txt': 'fresh' });
    const dry = await collectGarbage({ store, keep: new Set(), cutoffMs: Date.now() - 60_000, dryRun: true });
    expect(dry.manifests.deleted).toBe(0);
    expect(await names(store, 'manifest')).toContain(fresh.id);
    // Made old, unreferenced: a dry run counts it, deletes nothing; a real one deletes it.
    for (const f of [
      path.join(dir, 'manifests', `${fresh.id}.json`),
      path.join(dir, 'blobs', fresh.hashes[0]!.slice(0, 2), fresh.hashes[0]!),
    ]) {
      await fs.utimes(f, old, old);
    }
    const counted = await collectGarbage({ store, keep: new Set(), cutoffMs: Date.now() - 60_000, dryRun: true });
    expect(counted.manifests.deleted).toBeGreaterThanOrEqual(1);
    expect(await names(store, 'manifest')).toContain(fresh.id);
    await collectGarbage({ store, keep: new Set(), cutoffMs: Date.now() - 60_000 });
    expect(await names(store, 'manifest')).not.toContain(fresh.id);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('a kept checkpoint that cannot be read stops the deletion of contents', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'da-gc-'));
  try {
    const store = new DirectoryStore(dir);
    const kept = await checkpoint(store, { 'a.txt': 'kept' });
    await checkpoint(store, { 'c.txt': 'dropped' });
    await fs.writeFile(path.join(dir, 'manifests', `${kept.id}.json`), 'torn');
    const report = await collectGarbage({ store, keep: new Set([kept.id]), cutoffMs: Date.now() + 1000 });
    expect(report.unreadable.map((u) => u.id)).toEqual([kept.id]);
    expect(report.contents.deleted).toBe(0);
    expect(await names(store, 'blob')).toHaveLength(2);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test('durations: whole numbers with a unit, nothing else', () => {
  expect(parseDuration('30d')).toBe(30 * 86_400_000);
  expect(parseDuration('12h')).toBe(12 * 3_600_000);
  for (const bad of ['', '30', 'd', '-1d', '1.5d', '1e3d', '30 days', '99999999999d'])
    expect(parseDuration(bad)).toBeUndefined();
});

describeWithSeaweedfs('checkpoints gc on S3-compatible storage (SeaweedFS)', () => {
  let server: SeaweedServer;
  beforeAll(async () => {
    server = await startSeaweedfs('gc-test');
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('lists and deletes through the S3 API; the same marks and sweeps', async () => {
    const objects = new S3Objects({
      bucket: server.bucket,
      prefix: `gc-${Date.now()}`,
      endpoint: server.endpoint,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    });
    try {
      // S3 objects cannot be made old: the cutoff is set after they were written instead.
      await scenario(new VerifiedStore(objects), () => Date.now() + 1000);
    } finally {
      objects.destroy();
    }
  });
});
