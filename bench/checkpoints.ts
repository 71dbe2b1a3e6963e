/**
 * Workspace checkpoints in S3-compatible storage (SeaweedFS, started here): a first full checkpoint of
 * a generated workspace (default 10,000 files, ~200 MB of incompressible content), an incremental one
 * after 10 files changed (worker CPU ms and bytes uploaded), and a full restore into an empty
 * directory (wall time). The same incremental checkpoint into the embedded directory store is shown
 * for comparison.
 *
 * Alone: `npx tsc -p tsconfig.build.json && node dist/bench/checkpoints.js [files] [megabytes]`
 * (needs SeaweedFS built: `node scripts/ensure-setup.mjs --for-tests`). Not part of `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectoryStore, S3Objects, VerifiedStore, recordCheckpoint, restoreCheckpoint } from '../src/checkpoints';
import type { CheckpointStore, RecordedCheckpoint } from '../src/checkpoints';
import { findWeed, startWeedServer } from '../src/server/seaweedfs';

const CHANGED = 10;
const credentials = { accessKeyId: 'bench', secretAccessKey: 'bench-secret-0123456789' };

interface Timed<T> {
  value: T;
  wallMs: number;
  cpuMs: number;
}

async function timed<T>(run: () => Promise<T>): Promise<Timed<T>> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const value = await run();
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const used = process.cpuUsage(cpu);
  return { value, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

/** `files` files of random bytes in 100 directories, `megabytes` in all, their times an hour back. */
async function makeWorkspace(root: string, files: number, megabytes: number): Promise<string[]> {
  const each = Math.max(1, Math.floor((megabytes * 1024 * 1024) / files));
  const paths: string[] = [];
  const old = new Date(Date.now() - 3_600_000);
  for (let i = 0; i < files; i += 1) {
    const rel = path.join(`d${String(i % 100).padStart(2, '0')}`, `f${i}.bin`);
    const full = path.join(root, rel);
    if (i < 100) await fs.mkdir(path.dirname(full), { recursive: true });
    await fs.writeFile(full, randomBytes(each));
    await fs.utimes(full, old, old);
    paths.push(rel);
  }
  return paths;
}

async function changeSome(root: string, paths: string[]): Promise<void> {
  for (let i = 0; i < CHANGED; i += 1) {
    const rel = paths[Math.floor((i * paths.length) / CHANGED)]!;
    const full = path.join(root, rel);
    const size = (await fs.stat(full)).size;
    await fs.writeFile(full, randomBytes(size));
  }
}

function line(label: string, t: Timed<RecordedCheckpoint | unknown>, extra = ''): string {
  return `${label.padEnd(52)} wall ${t.wallMs.toFixed(0).padStart(7)} ms  cpu ${t.cpuMs.toFixed(0).padStart(7)} ms  ${extra}`;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

async function main(): Promise<void> {
  const files = Number(process.argv[2] ?? 10_000);
  const megabytes = Number(process.argv[3] ?? 200);
  const weed = await findWeed();
  if (!weed) throw new Error("SeaweedFS is not built: run 'node scripts/ensure-setup.mjs --for-tests' first.");
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'da-bench-ckpt-')));
  const server = await startWeedServer({ weed, bucket: 'bench', credentials });
  const objects = new S3Objects({ bucket: 'bench', prefix: 'ws', endpoint: server.endpoint, credentials });
  try {
    const ws = path.join(base, 'ws');
    const paths = await makeWorkspace(ws, files, megabytes);
    const out: string[] = [`workspace: ${files} files, ${megabytes} MB; ${CHANGED} files changed per turn`];
    const stores: Array<[string, CheckpointStore]> = [
      ['s3 (SeaweedFS)', new VerifiedStore(objects)],
      ['directory', new DirectoryStore(path.join(base, 'dir-store'))],
    ];
    const firsts = new Map<string, RecordedCheckpoint>();
    for (const [name, store] of stores) {
      const first = await timed(() => recordCheckpoint({ workspace: ws, store }));
      firsts.set(name, first.value);
      out.push(line(`${name}: first checkpoint`, first, `uploaded ${mb(first.value.bytes)}`));
    }
    await changeSome(ws, paths);
    for (const [name, store] of stores) {
      const previous = firsts.get(name)!.manifest;
      const next = await timed(() => recordCheckpoint({ workspace: ws, store, previous }));
      out.push(
        line(
          `${name}: checkpoint after ${CHANGED} changes`,
          next,
          `uploaded ${next.value.bytes} bytes, ${next.value.filesHashed} files hashed, ${next.value.filesChanged} changed`,
        ),
      );
      if (name.startsWith('s3')) {
        const target = path.join(base, 'restored');
        await fs.mkdir(target);
        const restore = await timed(() => restoreCheckpoint(next.value.id, { workspace: target, store }));
        out.push(line(`${name}: full restore into an empty directory`, restore, `${restore.value.written} entries`));
      }
    }
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    objects.destroy();
    await server.stop();
    await fs.rm(base, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
