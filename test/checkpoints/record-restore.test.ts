import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  DirectoryStore,
  parseManifest,
  recordCheckpoint,
  restoreCheckpoint,
  serializeManifest,
} from '../../src/checkpoints';
import type { Manifest } from '../../src/checkpoints';

/**
 * Checkpoints recorded from real workspaces into the embedded store and restored into fresh
 * directories; hostile manifests put straight into the store. No Temporal server is needed.
 */

let base: string;
beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-checkpoints-')));
});
afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

async function dir(name: string): Promise<string> {
  const p = path.join(base, name);
  await fs.mkdir(p, { recursive: true });
  return p;
}

/** Every path under `root` with what it is: content and mode, link text, or a directory. */
async function treeOf(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(rel: string): Promise<void> {
    for (const name of (await fs.readdir(path.join(root, rel))).sort()) {
      const p = rel ? `${rel}/${name}` : name;
      const st = await fs.lstat(path.join(root, p));
      if (st.isSymbolicLink()) out[p] = `link ${await fs.readlink(path.join(root, p))}`;
      else if (st.isDirectory()) {
        out[p] = `dir ${(st.mode & 0o777).toString(8)}`;
        await walk(p);
      } else out[p] = `file ${(st.mode & 0o777).toString(8)} ${await fs.readFile(path.join(root, p), 'utf8')}`;
    }
  }
  await walk('');
  return out;
}

/** Set every file's times an hour back, so the next scan may trust their stat (not "racy"). */
async function ageFiles(root: string): Promise<void> {
  const old = new Date(Date.now() - 3_600_000);
  for (const p of await fs.readdir(root, { recursive: true })) {
    const full = path.join(root, p);
    if ((await fs.lstat(full)).isFile()) await fs.utimes(full, old, old);
  }
}

test('a workspace recorded and restored into an empty directory comes back whole: files, modes, empty directories, links, odd names', async () => {
  const ws = await dir('ws');
  await fs.mkdir(path.join(ws, 'src/deep/er'), { recursive: true });
  await fs.mkdir(path.join(ws, 'empty'));
  await fs.writeFile(path.join(ws, 'src/parser.ts'), 'export const x = 1;\n');
  await fs.writeFile(path.join(ws, 'src/deep/er/data.json'), '{"a":1}');
  await fs.writeFile(path.join(ws, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  await fs.writeFile(path.join(ws, 'line\nbreak é.txt'), 'odd name');
  await fs.symlink('src/parser.ts', path.join(ws, 'link-to-parser'));
  await fs.symlink('/etc/passwd', path.join(ws, 'outside-link'));
  const store = new DirectoryStore(await dir('store'));

  const recorded = await recordCheckpoint({ workspace: ws, store });
  expect(recorded.filesChanged).toBe(6);
  expect(recorded.manifest.omitted).toEqual([]);

  const target = await dir('restored');
  await restoreCheckpoint(recorded.id, { workspace: target, store });
  expect(await treeOf(target)).toEqual(await treeOf(ws));
  // The link is a link with its text, never followed: /etc/passwd's content was not recorded.
  expect((await fs.lstat(path.join(target, 'outside-link'))).isSymbolicLink()).toBe(true);
});

test('the next checkpoint reads only what changed, uploads only new content, and counts what changed', async () => {
  const ws = await dir('ws');
  for (let i = 0; i < 50; i += 1) await fs.writeFile(path.join(ws, `f${i}.txt`), `content ${i}\n`);
  await ageFiles(ws);
  const store = new DirectoryStore(await dir('store'));
  const first = await recordCheckpoint({ workspace: ws, store });
  expect(first.filesHashed).toBe(50);

  await fs.writeFile(path.join(ws, 'f3.txt'), 'changed\n');
  await fs.writeFile(path.join(ws, 'copy.txt'), 'content 7\n'); // same bytes as f7: stored once
  await fs.rm(path.join(ws, 'f9.txt'));
  const second = await recordCheckpoint({ workspace: ws, store, previous: first.manifest });
  expect(second.filesHashed).toBe(2);
  expect(second.filesChanged).toBe(3);
  expect(second.bytes).toBe(Buffer.byteLength('changed\n'));

  // Nothing changed: the same manifest, the same id, nothing uploaded.
  await ageFiles(ws);
  const third = await recordCheckpoint({ workspace: ws, store, previous: second.manifest });
  const fourth = await recordCheckpoint({ workspace: ws, store, previous: third.manifest });
  expect(fourth.filesChanged).toBe(0);
  expect(fourth.bytes).toBe(0);
  expect(fourth.filesHashed).toBe(0);
});

test('a file rewritten with the same size within the same second as the last scan is read again (racy stat)', async () => {
  const ws = await dir('ws');
  await fs.writeFile(path.join(ws, 'a.txt'), 'aaaa');
  const store = new DirectoryStore(await dir('store'));
  const first = await recordCheckpoint({ workspace: ws, store });
  // Same size; the mtime is pinned to what the first scan saw, as on a coarse-timestamp file system.
  const st = await fs.stat(path.join(ws, 'a.txt'));
  await fs.writeFile(path.join(ws, 'a.txt'), 'bbbb');
  await fs.utimes(path.join(ws, 'a.txt'), st.atime, st.mtime);
  const second = await recordCheckpoint({ workspace: ws, store, previous: first.manifest });
  expect(second.filesChanged).toBe(1);
  const target = await dir('restored');
  await restoreCheckpoint(second.id, { workspace: target, store });
  expect(await fs.readFile(path.join(target, 'a.txt'), 'utf8')).toBe('bbbb');
});

test('what is left out is listed with its reason: a file over the limit, entries over the count, ignored paths, a name that is not UTF-8', async () => {
  const ws = await dir('ws');
  await fs.writeFile(path.join(ws, 'big.bin'), Buffer.alloc(2048));
  await fs.writeFile(path.join(ws, 'small.txt'), 'ok');
  await fs.mkdir(path.join(ws, 'node_modules/pkg'), { recursive: true });
  await fs.writeFile(path.join(ws, 'node_modules/pkg/index.js'), 'x');
  await fs.writeFile(Buffer.concat([Buffer.from(`${ws}/`), Buffer.from([0x62, 0xff, 0x2e, 0x74])]), 'latin-1 name');
  const store = new DirectoryStore(await dir('store'));
  const recorded = await recordCheckpoint({
    workspace: ws,
    store,
    limits: { maxFileBytes: 1024 },
    ignored: (p) => p === 'node_modules',
  });
  const paths = recorded.manifest.entries.map((e) => e.path);
  expect(paths).toEqual(['small.txt']);
  expect(recorded.manifest.omitted.map((o) => o.reason)).toEqual([
    expect.stringContaining('over the 1024-byte limit'), // big.bin sorts before b\xff.t in byte order
    expect.stringContaining('not valid UTF-8'),
  ]);
  const few = await recordCheckpoint({ workspace: ws, store, limits: { maxEntries: 1 } });
  expect(few.manifest.entries).toHaveLength(1);
  expect(few.manifest.omitted.some((o) => o.reason.includes('at most 1 entries'))).toBe(true);
});

test('a symlinked directory is recorded as a link: the walk never reads through it', async () => {
  const outside = await dir('outside');
  await fs.writeFile(path.join(outside, 'secret'), 'not yours');
  const ws = await dir('ws');
  await fs.symlink(outside, path.join(ws, 'sneaky'));
  const recorded = await recordCheckpoint({ workspace: ws, store: new DirectoryStore(await dir('store')) });
  expect(recorded.manifest.entries).toEqual([{ kind: 'symlink', path: 'sneaky', target: outside }]);
});

/** Put a hand-made manifest in the store, as someone with write access to the bucket could. */
async function planted(store: DirectoryStore, entries: unknown[]): Promise<string> {
  const bytes = Buffer.from(JSON.stringify({ version: 1, entries, omitted: [], scannedAt: 0 }));
  const { createHash } = await import('node:crypto');
  const id = createHash('sha256').update(bytes).digest('hex');
  await store.putManifest(id, bytes);
  return id;
}

const HASH = 'a'.repeat(64);

test.each([
  ['..', [{ kind: 'dir', path: '..', mode: 0o755 }], "'..' component"],
  [
    'a parent escape',
    [{ kind: 'file', path: '../x', hash: HASH, size: 1, mode: 0o644, mtimeMs: 0, ctimeMs: 0, ino: 0 }],
    "'..'",
  ],
  ['an absolute path', [{ kind: 'symlink', path: '/etc/x', target: 'y' }], 'absolute'],
  [
    'a path below a link',
    [
      { kind: 'symlink', path: 'a', target: '/tmp' },
      { kind: 'dir', path: 'a/b', mode: 0o755 },
    ],
    'not a directory',
  ],
  [
    'a path given twice',
    [
      { kind: 'dir', path: 'a', mode: 0o755 },
      { kind: 'dir', path: 'a', mode: 0o755 },
    ],
    'twice',
  ],
  ['set-uid bits', [{ kind: 'dir', path: 'a', mode: 0o4755 }], 'malformed'],
  ['a NUL in a name', [{ kind: 'dir', path: 'a\0b', mode: 0o755 }], 'NUL'],
])('a manifest with %s is refused before anything is written', async (_label, entries, message) => {
  const store = new DirectoryStore(await dir('store'));
  const id = await planted(store, entries);
  const target = await dir('target');
  await expect(restoreCheckpoint(id, { workspace: target, store })).rejects.toThrow(message);
  expect(await fs.readdir(target)).toEqual([]);
  expect(await fs.readdir(base)).toEqual(['store', 'target']);
});

test('a restore never writes through a link the workspace holds, and tampered content is refused', async () => {
  const outside = await dir('outside');
  const ws = await dir('ws');
  await fs.mkdir(path.join(ws, 'a'));
  await fs.writeFile(path.join(ws, 'a/x'), 'restored');
  const store = new DirectoryStore(await dir('store'));
  const { id, manifest } = await recordCheckpoint({ workspace: ws, store });

  const target = await dir('target');
  await fs.symlink(outside, path.join(target, 'a'));
  await restoreCheckpoint(id, { workspace: target, store });
  expect(await fs.readdir(outside)).toEqual([]);
  expect((await fs.lstat(path.join(target, 'a'))).isDirectory()).toBe(true);
  expect(await fs.readFile(path.join(target, 'a/x'), 'utf8')).toBe('restored');

  const file = manifest.entries.find((e) => e.kind === 'file');
  if (file?.kind !== 'file') throw new Error('no file entry');
  await fs.writeFile(path.join(store.root, 'blobs', file.hash.slice(0, 2), file.hash), 'tampered');
  await expect(restoreCheckpoint(id, { workspace: await dir('again'), store })).rejects.toThrow('corrupt');
});

test('an exact restore (rewind) removes what the checkpoint does not hold and keeps ignored paths', async () => {
  const ws = await dir('ws');
  await fs.writeFile(path.join(ws, 'keep.txt'), 'turn 1');
  const store = new DirectoryStore(await dir('store'));
  const turn1 = await recordCheckpoint({ workspace: ws, store, ignored: (p) => p === '.cache' });
  await fs.writeFile(path.join(ws, 'keep.txt'), 'turn 2');
  await fs.mkdir(path.join(ws, 'later/deeper'), { recursive: true });
  await fs.writeFile(path.join(ws, 'later/deeper/new.txt'), 'new');
  await fs.mkdir(path.join(ws, '.cache'));
  await fs.writeFile(path.join(ws, '.cache/x'), 'ignored');
  await restoreCheckpoint(turn1.id, { workspace: ws, store, exact: true, ignored: (p) => p === '.cache' });
  expect(await treeOf(ws)).toEqual({
    '.cache': expect.stringMatching(/^dir /),
    '.cache/x': expect.stringMatching(/ignored$/),
    'keep.txt': expect.stringMatching(/turn 1$/),
  });
});

test('equal trees give one manifest id; the id is the hash of the manifest', async () => {
  const ws = await dir('ws');
  await fs.writeFile(path.join(ws, 'a'), 'a');
  const store = new DirectoryStore(await dir('store'));
  const one = await recordCheckpoint({ workspace: ws, store, now: () => 1000 });
  const two = await recordCheckpoint({ workspace: ws, store, now: () => 1000 });
  expect(two.id).toBe(one.id);
  const manifest: Manifest = parseManifest(await store.getManifest(one.id));
  expect(serializeManifest(manifest).id).toBe(one.id);
});
