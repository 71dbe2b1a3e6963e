import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CheckpointMissingError,
  S3Objects,
  VerifiedStore,
  recordCheckpoint,
  restoreCheckpoint,
  storeFromEnv,
  type CheckpointStore,
} from '../../src/checkpoints';
import { sha256 } from '../../src/checkpoints/store';
import {
  ACCESS_KEY,
  SECRET_KEY,
  describeWithSeaweedfs,
  startSeaweedfs,
  type SeaweedServer,
} from '../support/seaweedfs';

/**
 * The S3-compatible store against a real server (SeaweedFS, built from its Go module and cached):
 * record and restore, incremental uploads, write-once, tampering, and a store that dies or hangs
 * mid-operation (the call fails within its deadline, saying which store and object).
 */

jest.setTimeout(180_000);

let server: SeaweedServer;
let raw: S3Client;
let base: string;

function env(prefix: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    DURABLE_AGENT_CHECKPOINTS: `s3://${server.bucket}/${prefix}`,
    AWS_ENDPOINT_URL: server.endpoint,
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: SECRET_KEY,
    ...extra,
  };
}

function objects(prefix: string, on: SeaweedServer = server): S3Objects {
  return new S3Objects({
    bucket: on.bucket,
    prefix,
    endpoint: on.endpoint,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
}

async function keysUnder(prefix: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await raw.send(
      new ListObjectsV2Command({ Bucket: server.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) out.push(o.Key!);
    token = page.NextContinuationToken;
  } while (token);
  return out.sort();
}

async function dir(name: string): Promise<string> {
  const p = path.join(base, name);
  await fs.mkdir(p, { recursive: true });
  return p;
}

async function ageFiles(root: string): Promise<void> {
  const old = new Date(Date.now() - 3_600_000);
  for (const p of await fs.readdir(root, { recursive: true })) {
    const full = path.join(root, p);
    if ((await fs.lstat(full)).isFile()) await fs.utimes(full, old, old);
  }
}

describeWithSeaweedfs('S3 checkpoint store (SeaweedFS)', () => {
  beforeAll(async () => {
    server = await startSeaweedfs();
    raw = new S3Client({
      endpoint: server.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
    });
  });
  afterAll(async () => {
    raw?.destroy();
    await server?.stop();
  });
  beforeEach(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckpt-s3-')));
  });
  afterEach(async () => {
    await fs.rm(base, { recursive: true, force: true });
  });

  test('a workspace recorded into the bucket is restored whole into an empty directory', async () => {
    const ws = await dir('ws');
    await fs.mkdir(path.join(ws, 'src/deep'), { recursive: true });
    await fs.mkdir(path.join(ws, 'empty'));
    await fs.writeFile(path.join(ws, 'src/parser.ts'), 'export const x = 1;\n');
    await fs.writeFile(path.join(ws, 'src/deep/big.bin'), randomBytes(3 * 1024 * 1024));
    await fs.writeFile(path.join(ws, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
    await fs.symlink('src/parser.ts', path.join(ws, 'link'));
    const store = storeFromEnv(env('restore'))!;
    expect(store.description).toBe(`s3://${server.bucket}/restore`);

    const recorded = await recordCheckpoint({ workspace: ws, store });
    const keys = await keysUnder('restore');
    expect(keys).toContain(`restore/manifests/${recorded.id}`);
    expect(keys.filter((k) => k.startsWith('restore/blobs/'))).toHaveLength(3);

    const target = await dir('restored');
    await restoreCheckpoint(recorded.id, { workspace: target, store });
    for (const f of ['src/parser.ts', 'src/deep/big.bin', 'run.sh']) {
      expect(await fs.readFile(path.join(target, f))).toEqual(await fs.readFile(path.join(ws, f)));
    }
    expect((await fs.stat(path.join(target, 'run.sh'))).mode & 0o777).toBe(0o755);
    expect(await fs.readlink(path.join(target, 'link'))).toBe('src/parser.ts');
    expect((await fs.stat(path.join(target, 'empty'))).isDirectory()).toBe(true);
  });

  test('an incremental checkpoint uploads only the changed contents and one manifest', async () => {
    const ws = await dir('ws');
    for (let i = 0; i < 100; i += 1) await fs.writeFile(path.join(ws, `f${i}.txt`), `content ${i}\n`.repeat(50));
    await ageFiles(ws);
    const store = storeFromEnv(env('incremental'))!;
    const first = await recordCheckpoint({ workspace: ws, store });
    const before = await keysUnder('incremental');
    expect(before).toHaveLength(101);

    await fs.writeFile(path.join(ws, 'f1.txt'), 'changed one\n');
    await fs.writeFile(path.join(ws, 'f2.txt'), 'changed two\n');
    await fs.writeFile(path.join(ws, 'copy.txt'), 'content 5\n'.repeat(50)); // same bytes as f5: not uploaded
    const second = await recordCheckpoint({ workspace: ws, store, previous: first.manifest });
    expect(second.filesChanged).toBe(3);
    expect(second.bytes).toBe(2 * 'changed one\n'.length);
    const added = (await keysUnder('incremental')).filter((k) => !before.includes(k));
    expect(added.sort()).toEqual(
      [
        `incremental/blobs/${sha256(Buffer.from('changed one\n'))}`,
        `incremental/blobs/${sha256(Buffer.from('changed two\n'))}`,
        `incremental/manifests/${second.id}`,
      ].sort(),
    );
  });

  test('write-once: an existing name is never overwritten, racing writers agree, the server honours If-None-Match', async () => {
    const store = new VerifiedStore(objects('once'));
    const data = Buffer.from('first bytes');
    const hash = sha256(data);
    await Promise.all(Array.from({ length: 6 }, () => store.putBlob(hash, data)));
    expect((await store.getBlob(hash)).toString()).toBe('first bytes');

    // The byte level: a second put of the same name with other bytes leaves the first.
    await objects('once').put('blob', hash, Buffer.from('other bytes'));
    expect((await store.getBlob(hash)).toString()).toBe('first bytes');
    // The server refuses a conditional overwrite (what makes two racing workers safe without the HEAD).
    await expect(
      raw.send(new PutObjectCommand({ Bucket: server.bucket, Key: `once/blobs/${hash}`, Body: 'x', IfNoneMatch: '*' })),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
    await expect(store.putBlob(hash, Buffer.from('not its content'))).rejects.toThrow(/its bytes hash otherwise/);
  });

  test('a tampered object is refused; a missing one says so; an oversized one is not downloaded', async () => {
    const store = new VerifiedStore(objects('tamper'));
    const data = Buffer.from('genuine content\n');
    const hash = sha256(data);
    await store.putBlob(hash, data);
    await raw.send(
      new PutObjectCommand({ Bucket: server.bucket, Key: `tamper/blobs/${hash}`, Body: 'evil content\n' }),
    );
    await expect(store.getBlob(hash)).rejects.toThrow(`content ${hash} is corrupt or was altered`);

    const absent = sha256(Buffer.from('never stored'));
    await expect(store.getBlob(absent)).rejects.toBeInstanceOf(CheckpointMissingError);
    await expect(store.getManifest(absent)).rejects.toThrow(`The checkpoint store has no checkpoint ${absent}.`);

    const huge = sha256(Buffer.from('huge'));
    await raw.send(
      new PutObjectCommand({ Bucket: server.bucket, Key: `tamper/blobs/${huge}`, Body: Buffer.alloc(64 * 1024) }),
    );
    await expect(objects('tamper').get('blob', huge, 1024)).rejects.toThrow(/over the 1024-byte bound/);
    // An encrypted store's bytes in the bucket are ciphertext.
    const encrypted = storeFromEnv(
      env('tamper-enc', { DURABLE_AGENT_CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}` }),
    )!;
    await encrypted.putBlob(hash, data);
    const stored = await raw.send(new GetObjectCommand({ Bucket: server.bucket, Key: `tamper-enc/blobs/${hash}` }));
    const bytes = Buffer.from(await stored.Body!.transformToByteArray());
    expect(bytes.includes(Buffer.from('genuine'))).toBe(false);
    expect(await encrypted.getBlob(hash)).toEqual(data);
  });
});

describeWithSeaweedfs('S3 checkpoint store: a store that dies or hangs', () => {
  let own: SeaweedServer;
  beforeEach(async () => {
    base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckpt-s3-')));
    own = await startSeaweedfs('dying');
  });
  afterEach(async () => {
    await own?.stop();
    await fs.rm(base, { recursive: true, force: true });
  });

  const bounds = { maxAttempts: 2, connectTimeoutMs: 1000, requestTimeoutMs: 3000, callTimeoutMs: 4000 };

  function ownStore(): CheckpointStore {
    return new VerifiedStore(
      new S3Objects({
        bucket: own.bucket,
        prefix: 'p',
        endpoint: own.endpoint,
        credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
        ...bounds,
      }),
    );
  }

  test('killed in the middle of a checkpoint: the recording fails within seconds, naming the store and the object', async () => {
    const ws = await dir('ws');
    for (let i = 0; i < 200; i += 1) await fs.writeFile(path.join(ws, `f${i}.txt`), `file ${i}\n`);
    const inner = ownStore();
    let puts = 0;
    const killing: CheckpointStore = {
      description: inner.description,
      hasBlob: (h) => inner.hasBlob(h),
      getBlob: (h) => inner.getBlob(h),
      getManifest: (id) => inner.getManifest(id),
      putManifest: (id, b) => inner.putManifest(id, b),
      putBlob: async (h, b) => {
        puts += 1;
        if (puts === 20) own.kill();
        return inner.putBlob(h, b);
      },
    };
    const started = Date.now();
    await expect(recordCheckpoint({ workspace: ws, store: killing })).rejects.toThrow(
      new RegExp(`The checkpoint store s3://dying/p failed (HEAD|PUT) p/blobs/[0-9a-f]{64}: `),
    );
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(puts).toBeLessThan(25);
  });

  test('a store that accepts connections and never answers fails a call within its deadline', async () => {
    const store = ownStore();
    const data = Buffer.from('x');
    // Written without the short deadline: a fresh server's first write allocates its volumes (seconds here).
    await new VerifiedStore(objects('p', own)).putBlob(sha256(data), data);
    own.pause();
    try {
      const started = Date.now();
      await expect(store.getBlob(sha256(data))).rejects.toThrow(
        /The checkpoint store s3:\/\/dying\/p failed GET p\/blobs\/[0-9a-f]{64}: no answer within 4 s\./,
      );
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(3500);
      expect(took).toBeLessThan(8000);
    } finally {
      own.resume();
    }
    // Back: the same store object works again.
    expect((await store.getBlob(sha256(data))).toString()).toBe('x');
  });
});
