/**
 * Workspace checkpoints in S3-compatible storage (SeaweedFS, started here) and the embedded directory
 * store, as the worker records them (`WorkerCheckpoints`: mutex, ignore rules, stat cache): a first
 * full checkpoint of a generated workspace (default 10,000 files, ~200 MB of incompressible content),
 * then TURNS turns of 10 files changed each (worker CPU ms and wall ms, median, bytes uploaded), side by
 * side in the same run with `git add -A && git commit` and a `tar` of the workspace after the same
 * changes; the worst case (every file changed); and a full restore from SeaweedFS into an empty
 * directory (wall time).
 *
 * Alone: `npx tsc -p tsconfig.build.json && node dist/bench/checkpoints.js [files] [megabytes]`
 * (needs SeaweedFS built: `node scripts/ensure-setup.mjs --for-tests`). Not part of `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { DirectoryStore, S3Objects, VerifiedStore, WorkerCheckpoints, restoreCheckpoint } from '../src/checkpoints';
import type { CheckpointStore } from '../src/checkpoints';
import { findWeed, startWeedServer } from '../src/server/seaweedfs';

const CHANGED = 10;
const TURNS = 5;
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

async function changeSome(root: string, paths: string[], turn: number, count = CHANGED): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const rel = paths[(Math.floor((i * paths.length) / count) + turn) % paths.length]!;
    const full = path.join(root, rel);
    const size = (await fs.stat(full)).size;
    await fs.writeFile(full, randomBytes(size));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function row(label: string, wall: number[], cpu: number[] | undefined, extra = ''): string {
  const c = cpu ? `cpu ${median(cpu).toFixed(0).padStart(6)} ms` : 'cpu      - ';
  return `${label.padEnd(58)} wall ${median(wall).toFixed(0).padStart(7)} ms  ${c}  ${extra}`;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Wall time of a shell command in `cwd` (its CPU is another process's). */
function shell(cwd: string, command: string): number {
  const started = process.hrtime.bigint();
  execFileSync('sh', ['-c', command], { cwd, stdio: 'ignore' });
  return Number(process.hrtime.bigint() - started) / 1e6;
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
    const out: string[] = [
      `workspace: ${files} files, ${megabytes} MB; ${CHANGED} files changed per turn, median of ${TURNS} turns; load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores`,
    ];
    const s3 = new VerifiedStore(objects);
    const workers: Array<[string, WorkerCheckpoints, CheckpointStore]> = [
      ['s3 (SeaweedFS)', new WorkerCheckpoints({ store: s3 }), s3],
      ['directory', new WorkerCheckpoints({ store: new DirectoryStore(path.join(base, 'dir-store')) }), s3],
    ];
    for (const [name, worker] of workers) {
      const first = await timed(() => worker.record(ws, 0));
      out.push(row(`${name}: first checkpoint`, [first.wallMs], [first.cpuMs], `uploaded ${mb(first.value!.bytes)}`));
    }
    // git's baseline: the workspace committed once (not timed), its repository outside the workspace
    // so the checkpoints do not record it.
    const gitCmd = `git --git-dir=${path.join(base, 'bench.git')} --work-tree=${ws} -c user.name=b -c user.email=b@b`;
    execFileSync('sh', ['-c', `${gitCmd} init -q && ${gitCmd} add -A && ${gitCmd} commit -qm 0`], {
      cwd: ws,
      stdio: 'ignore',
    });
    const measured = new Map<string, { wall: number[]; cpu: number[]; bytes: number[]; changed: number[] }>();
    const git: number[] = [];
    const tar: number[] = [];
    let lastId = '';
    for (let turn = 1; turn <= TURNS; turn += 1) {
      await changeSome(ws, paths, turn);
      for (const [name, worker] of workers) {
        const t = await timed(() => worker.record(ws, turn));
        const m = measured.get(name) ?? { wall: [], cpu: [], bytes: [], changed: [] };
        m.wall.push(t.wallMs);
        m.cpu.push(t.cpuMs);
        m.bytes.push(t.value!.bytes);
        m.changed.push(t.value!.filesChanged);
        measured.set(name, m);
        if (name.startsWith('s3')) lastId = t.value!.id;
      }
      git.push(shell(ws, `${gitCmd} add -A && ${gitCmd} commit -qm turn`));
      tar.push(shell(base, `tar -cf ${path.join(base, 'ws.tar')} -C ws .`));
    }
    for (const [name, m] of measured) {
      out.push(
        row(
          `${name}: checkpoint after ${CHANGED} changes`,
          m.wall,
          m.cpu,
          `uploaded ${median(m.bytes)} bytes, ${median(m.changed)} files changed`,
        ),
      );
    }
    out.push(row(`git add -A && git commit (same changes)`, git, undefined));
    out.push(row(`tar of the workspace (same changes)`, tar, undefined));
    // Worst case: every file changed.
    await changeSome(ws, paths, 0, paths.length);
    for (const [name, worker] of workers) {
      const t = await timed(() => worker.record(ws, TURNS + 1));
      out.push(row(`${name}: every file changed`, [t.wallMs], [t.cpuMs], `uploaded ${mb(t.value!.bytes)}`));
      if (name.startsWith('s3')) lastId = t.value!.id;
    }
    const target = path.join(base, 'restored');
    await fs.mkdir(target);
    const restore = await timed(() => restoreCheckpoint(lastId, { workspace: target, store: s3 }));
    out.push(
      row(
        `s3 (SeaweedFS): full restore into an empty directory`,
        [restore.wallMs],
        [restore.cpuMs],
        `${restore.value.written} entries`,
      ),
    );
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
