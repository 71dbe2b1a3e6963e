import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectoryStore, loadManifest, restoreCheckpoint, WorkerCheckpoints } from '../../src/checkpoints';
import { SwitchableStore } from '../support/switchable-store';

/**
 * The worker's checkpoints under faults and odd workspaces (docs/checkpoints.md#faults-and-limits),
 * each with a bounded, documented outcome: a store that is down, a 5 GB file, more entries than the
 * limit, a workspace replaced by a symlink, nested workspaces of two runs, a file written while it
 * is read, a workspace that differs from the run's last checkpoint. No Temporal server is needed.
 */

let base: string;
let store: DirectoryStore;
beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckpt-faults-')));
  store = new DirectoryStore(path.join(base, 'store'));
});
afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

async function dir(name: string): Promise<string> {
  const p = path.join(base, name);
  await fs.mkdir(p, { recursive: true });
  return p;
}

test('a store that is down: the turn is pending (never an error), and the next call records it before it runs', async () => {
  const ws = await dir('ws');
  const flaky = new SwitchableStore(store);
  const worker = new WorkerCheckpoints({ store: flaky });
  await fs.writeFile(path.join(ws, 'a.txt'), 'one');
  const zero = await worker.record(ws, 0);
  expect(zero).toMatchObject({ turn: 0, filesChanged: 1 });
  await fs.writeFile(path.join(ws, 'b.txt'), 'two');
  flaky.down = true;
  const pending = await worker.record(ws, 1, { baseId: zero!.id });
  expect(pending).toMatchObject({ turn: 1, id: '', pending: true });
  // Still down: nothing lands, nothing throws.
  expect(await worker.retryPending(ws)).toBeUndefined();
  flaky.down = false;
  const landed = await worker.retryPending(ws);
  expect(landed).toMatchObject({ turn: 1, filesChanged: 1 });
  expect(landed!.pending).toBeUndefined();
  const manifest = await loadManifest(store, landed!.id);
  expect(manifest.entries.map((e) => e.path).sort()).toEqual(['a.txt', 'b.txt']);
  // Landed once: nothing is left to retry.
  expect(await worker.retryPending(ws)).toBeUndefined();
});

test('a 5 GB file is left out by the per-file limit without being read, and listed with its reason', async () => {
  const ws = await dir('ws');
  const big = await fs.open(path.join(ws, 'huge.bin'), 'w');
  await big.truncate(5 * 1024 ** 3); // sparse: no disk space used
  await big.close();
  await fs.writeFile(path.join(ws, 'small.txt'), 'small');
  const worker = new WorkerCheckpoints({ store });
  const started = Date.now();
  const ref = await worker.record(ws, 1);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(ref).toMatchObject({ omitted: 1, filesChanged: 1, bytes: 5 });
  const manifest = await loadManifest(store, ref!.id);
  expect(manifest.omitted).toEqual([{ path: 'huge.bin', reason: expect.stringContaining('over the') }]);
});

test('more entries than the limit (a million files, here with the limit lowered to 1,000): the rest is left out and listed', async () => {
  const ws = await dir('ws');
  await Promise.all(
    Array.from({ length: 1_500 }, (_, i) => fs.writeFile(path.join(ws, `f${String(i).padStart(5, '0')}`), `${i}`)),
  );
  const worker = new WorkerCheckpoints({ store, limits: { maxEntries: 1_000 } });
  const ref = await worker.record(ws, 1);
  expect(ref).toMatchObject({ filesChanged: 1_000, omitted: 500 });
  const manifest = await loadManifest(store, ref!.id);
  expect(manifest.entries).toHaveLength(1_000);
  expect(manifest.omitted[0]).toEqual({ path: 'f01000', reason: expect.stringContaining('at most 1000 entries') });
});

test('a workspace replaced by a symlink between turns: no checkpoint (nothing outside is read), earlier ones stand', async () => {
  const ws = await dir('ws');
  const outside = await dir('outside');
  await fs.writeFile(path.join(outside, 'secret.txt'), "not the run's");
  await fs.writeFile(path.join(ws, 'a.txt'), 'a');
  const worker = new WorkerCheckpoints({ store });
  const first = await worker.record(ws, 1);
  expect(first?.id).toMatch(/^[0-9a-f]{64}$/);
  await fs.rename(ws, path.join(base, 'moved'));
  await fs.symlink(outside, ws);
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    expect(await worker.record(ws, 2)).toBeUndefined();
    expect(warn.mock.calls.join('\n')).toMatch(/no checkpoint of .* for turn 2/);
  } finally {
    warn.mockRestore();
  }
  // The failover check refuses to restore or compare through the link as well.
  await expect(worker.checkBeforeCall(ws, 'f'.repeat(64))).resolves.toMatchObject({ unchecked: expect.any(String) });
  expect((await loadManifest(store, first!.id)).entries.map((e) => e.path)).toEqual(['a.txt']);
});

test('nested workspaces of two runs: each run records its own tree; the outer one holds the inner files as they were', async () => {
  const outer = await dir('outer');
  const inner = await dir('outer/inner');
  await fs.writeFile(path.join(outer, 'o.txt'), 'outer');
  await fs.writeFile(path.join(inner, 'i.txt'), 'inner');
  const worker = new WorkerCheckpoints({ store });
  const [o, i] = await Promise.all([worker.record(outer, 1), worker.record(inner, 1)]);
  expect((await loadManifest(store, o!.id)).entries.map((e) => e.path)).toEqual(['inner', 'inner/i.txt', 'o.txt']);
  expect((await loadManifest(store, i!.id)).entries.map((e) => e.path)).toEqual(['i.txt']);
  const into = await dir('restored');
  await restoreCheckpoint(i!.id, { workspace: into, store });
  expect(await fs.readdir(into)).toEqual(['i.txt']);
});

test('a file written while the checkpoint reads it: recorded as of one moment or left out with the reason, never torn', async () => {
  const ws = await dir('ws');
  const file = path.join(ws, 'growing.log');
  await fs.writeFile(file, '');
  let writing = true;
  const writer = (async () => {
    const handle = await fs.open(file, 'a');
    // Bounded (under the per-file limit, so only the writes can make it left out).
    for (let size = 0; writing && size < 32 * 1024 * 1024; size += 16 * 1024) await handle.write('x'.repeat(16 * 1024));
    await handle.close();
  })();
  const worker = new WorkerCheckpoints({ store });
  const refs = [];
  for (let n = 0; n < 5; n += 1) refs.push(await worker.record(ws, n));
  writing = false;
  await writer;
  for (const ref of refs) {
    const manifest = await loadManifest(store, ref!.id);
    const entry = manifest.entries.find((e) => e.path === 'growing.log');
    if (entry) {
      // The stored content is exactly the recorded size (the store verifies its hash on read).
      expect(entry.kind === 'file' && (await store.getBlob(entry.hash)).length).toBe(
        entry.kind === 'file' && entry.size,
      );
    } else {
      expect(manifest.omitted).toEqual([{ path: 'growing.log', reason: expect.stringMatching(/written|changed/) }]);
    }
  }
});

test('failover check: an empty workspace is restored, a differing one kept and its paths reported, an equal one left alone', async () => {
  const ws = await dir('ws');
  await fs.writeFile(path.join(ws, 'a.txt'), 'a');
  await fs.mkdir(path.join(ws, 'node_modules'));
  await fs.writeFile(path.join(ws, 'node_modules', 'dep.js'), 'ignored');
  const recorder = new WorkerCheckpoints({ store });
  const ref = await recorder.record(ws, 1);
  expect((await loadManifest(store, ref!.id)).entries.map((e) => e.path)).toEqual(['a.txt']);

  // Another worker (no memory of this workspace): equal → nothing to do.
  expect(await new WorkerCheckpoints({ store }).checkBeforeCall(ws, ref!.id)).toEqual({});
  // Empty but for ignored paths → restored.
  await fs.rm(path.join(ws, 'a.txt'));
  expect(await new WorkerCheckpoints({ store }).checkBeforeCall(ws, ref!.id)).toEqual({ restored: 1 });
  expect(await fs.readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('a');
  // Changed outside the run → kept as it is, reported.
  await fs.writeFile(path.join(ws, 'a.txt'), 'changed by someone');
  await fs.writeFile(path.join(ws, 'new.txt'), 'new');
  const other = new WorkerCheckpoints({ store });
  expect(await other.checkBeforeCall(ws, ref!.id)).toEqual({ diverged: { paths: ['a.txt', 'new.txt'], count: 2 } });
  expect(await fs.readFile(path.join(ws, 'a.txt'), 'utf8')).toBe('changed by someone');
  // Reported once per worker and checkpoint, not before every call.
  expect(await other.checkBeforeCall(ws, ref!.id)).toEqual({});
});

test('restoreFrom at run start: only into an empty workspace', async () => {
  const ws = await dir('ws');
  await fs.writeFile(path.join(ws, 'a.txt'), 'a');
  const worker = new WorkerCheckpoints({ store });
  const ref = await worker.record(ws, 3);
  await expect(worker.restoreAtStart(ws, ref!.id)).rejects.toThrow(/needs an empty workspace/);
  const fork = await dir('fork');
  expect(await worker.restoreAtStart(fork, ref!.id)).toBe(1);
  expect(await fs.readFile(path.join(fork, 'a.txt'), 'utf8')).toBe('a');
});
