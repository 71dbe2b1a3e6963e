import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  DirectoryObjects,
  DirectoryStore,
  EncryptedStore,
  recordCheckpoint,
  restoreCheckpoint,
  storeFromEnv,
} from '../../src/checkpoints';
import { parseCodecKeys } from '../../src/codec/keys';

/**
 * Checkpoints encrypted with the codec's keys before they leave the worker: the store holds no
 * plaintext byte, names stay the plaintext hashes (dedupe), and a wrong or unknown key fails saying so.
 */

let base: string;
beforeEach(async () => {
  base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckpt-enc-')));
});
afterEach(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

const key = () => randomBytes(32).toString('base64');

async function dir(name: string): Promise<string> {
  const p = path.join(base, name);
  await fs.mkdir(p, { recursive: true });
  return p;
}

/** Every byte under `root`, concatenated. */
async function allBytes(root: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (const p of await fs.readdir(root, { recursive: true })) {
    const full = path.join(root, p);
    if ((await fs.lstat(full)).isFile()) parts.push(await fs.readFile(full));
  }
  return Buffer.concat(parts);
}

const SECRET = 'the launch code is 0000-SECRET-4242';

async function workspace(): Promise<string> {
  const ws = await dir('ws');
  await fs.mkdir(path.join(ws, 'src'));
  await fs.writeFile(path.join(ws, 'src/secret-plan.txt'), `${SECRET}\n`);
  await fs.writeFile(path.join(ws, 'README.md'), `# notes\n${SECRET.repeat(3)}\n`);
  return ws;
}

test('contents and manifests are encrypted in the store (no plaintext, no path), and restore decrypts them', async () => {
  const ws = await workspace();
  const root = await dir('store');
  const store = storeFromEnv({ DURABLE_AGENT_CHECKPOINTS: root, DURABLE_AGENT_CODEC_KEYS: `k1:${key()}` })!;
  expect(store).toBeInstanceOf(EncryptedStore);
  const recorded = await recordCheckpoint({ workspace: ws, store });

  const stored = await allBytes(root);
  expect(stored.length).toBeGreaterThan(0);
  expect(stored.includes(Buffer.from('0000-SECRET-4242'))).toBe(false);
  expect(stored.includes(Buffer.from('secret-plan'))).toBe(false);
  // The same store read without the keys sees only ciphertext: its hash check refuses it.
  await expect(new DirectoryStore(root).getManifest(recorded.id)).rejects.toThrow(/corrupt/);

  const target = await dir('restored');
  await restoreCheckpoint(recorded.id, { workspace: target, store });
  expect(await fs.readFile(path.join(target, 'src/secret-plan.txt'), 'utf8')).toBe(`${SECRET}\n`);
});

test('names stay the plaintext hashes: unchanged contents are not uploaded again', async () => {
  const ws = await workspace();
  const keys = parseCodecKeys(`k1:${key()}`)!;
  const store = new EncryptedStore(new DirectoryObjects(await dir('store')), keys);
  const first = await recordCheckpoint({ workspace: ws, store });
  expect(first.bytes).toBeGreaterThan(0);
  await fs.writeFile(path.join(ws, 'copy.txt'), `${SECRET}\n`); // same bytes as src/secret-plan.txt
  const second = await recordCheckpoint({ workspace: ws, store, previous: first.manifest });
  expect(second.filesChanged).toBe(1);
  expect(second.bytes).toBe(0);
});

test('after a key rotation old checkpoints still read; an unknown key id and a wrong key fail with a clear message', async () => {
  const ws = await workspace();
  const root = await dir('store');
  const old = key();
  const recorded = await recordCheckpoint({
    workspace: ws,
    store: new EncryptedStore(new DirectoryObjects(root), parseCodecKeys(`old:${old}`)!),
  });

  const rotated = new EncryptedStore(new DirectoryObjects(root), parseCodecKeys(`new:${key()},old:${old}`)!);
  await restoreCheckpoint(recorded.id, { workspace: await dir('r1'), store: rotated });

  const unknown = new EncryptedStore(new DirectoryObjects(root), parseCodecKeys(`new:${key()}`)!);
  await expect(unknown.getManifest(recorded.id)).rejects.toThrow(
    /was encrypted with key id 'old', which is not in DURABLE_AGENT_CODEC_KEYS \(known ids: new\)/,
  );
  const wrong = new EncryptedStore(new DirectoryObjects(root), parseCodecKeys(`old:${key()}`)!);
  await expect(restoreCheckpoint(recorded.id, { workspace: await dir('r2'), store: wrong })).rejects.toThrow(
    /failed authentication with key id 'old'/,
  );
});

test('a ciphertext altered or moved under another name is refused', async () => {
  const root = await dir('store');
  const keys = parseCodecKeys(`k1:${key()}`)!;
  const store = new EncryptedStore(new DirectoryObjects(root), keys);
  const ws = await workspace();
  const recorded = await recordCheckpoint({ workspace: ws, store });
  const [a, b] = recorded.manifest.entries.flatMap((e) => (e.kind === 'file' ? [e.hash] : [])) as [string, string];
  const file = (h: string) => path.join(root, 'blobs', h.slice(0, 2), h);

  // Flip one ciphertext bit.
  const bytes = await fs.readFile(file(a));
  bytes.writeUInt8(bytes.readUInt8(bytes.length - 20) ^ 1, bytes.length - 20);
  await fs.writeFile(file(a), bytes);
  await expect(store.getBlob(a)).rejects.toThrow(/failed authentication/);
  // A valid ciphertext of another content, copied under this name.
  await fs.copyFile(file(b), file(a));
  await expect(store.getBlob(a)).rejects.toThrow(/failed authentication/);
});

test('what was stored before encryption was turned on still reads (checked against its hash)', async () => {
  const root = await dir('store');
  const ws = await workspace();
  const recorded = await recordCheckpoint({ workspace: ws, store: new DirectoryStore(root) });
  const store = new EncryptedStore(new DirectoryObjects(root), parseCodecKeys(`k1:${key()}`)!);
  const target = await dir('restored');
  await restoreCheckpoint(recorded.id, { workspace: target, store });
  expect(await fs.readFile(path.join(target, 'README.md'), 'utf8')).toContain(SECRET);
});

test('an object over the read bound is refused before it is read', async () => {
  const root = await dir('store');
  const objects = new DirectoryObjects(root);
  const hash = 'a'.repeat(64);
  await objects.put('blob', hash, Buffer.alloc(4096));
  await expect(objects.get('blob', hash, 1024)).rejects.toThrow(/over the 1024-byte bound: refusing to read it/);
});
