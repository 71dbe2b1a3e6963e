import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, constants as fsConstants } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { cacheDir } from './temporal-cli';

/**
 * SeaweedFS's `weed`, an S3-compatible server the checkpoint tests and benchmarks run against. Built
 * once from its Go module into the per-user cache (next to the Temporal CLI), so fresh clones and CI
 * checkouts reuse one build. The module has `replace` directives, which `go install mod@version`
 * refuses, so it is downloaded with `go mod download` and built inside its own directory.
 */
export const SEAWEEDFS_MODULE = 'github.com/seaweedfs/seaweedfs';
/** The version the Go module proxy serves here (a pseudo-version of its main branch). */
export const SEAWEEDFS_VERSION = 'v0.0.0-20261109003541-7506e5f91cd6';

export function cachedWeedPath(): string {
  return path.join(cacheDir(), `seaweedfs-${SEAWEEDFS_VERSION}`, 'weed');
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

/** `SEAWEEDFS_WEED` (an explicit binary) or the cached build; `undefined` when neither exists. */
export async function findWeed(): Promise<string | undefined> {
  const fromEnv = process.env.SEAWEEDFS_WEED;
  if (fromEnv) {
    if (await isExecutable(fromEnv)) return fromEnv;
    throw new Error(`SEAWEEDFS_WEED is set to '${fromEnv}', which is not an executable file.`);
  }
  return (await isExecutable(cachedWeedPath())) ? cachedWeedPath() : undefined;
}

/** The binary, built into the cache when missing (many minutes the first time). */
export async function ensureWeed(log: (message: string) => void = () => {}): Promise<string> {
  const found = await findWeed();
  if (found) return found;
  const target = cachedWeedPath();
  await fs.mkdir(path.dirname(target), { recursive: true });
  log(`Building SeaweedFS ${SEAWEEDFS_VERSION} from its Go module (first time only; many minutes)…`);
  const download = await runGo(['mod', 'download', '-json', `${SEAWEEDFS_MODULE}@${SEAWEEDFS_VERSION}`], undefined);
  let moduleDir: string;
  try {
    moduleDir = (JSON.parse(download) as { Dir?: string }).Dir ?? '';
  } catch {
    throw new Error(`'go mod download ${SEAWEEDFS_MODULE}@${SEAWEEDFS_VERSION}' printed no module directory.`);
  }
  if (!moduleDir)
    throw new Error(`'go mod download ${SEAWEEDFS_MODULE}@${SEAWEEDFS_VERSION}' printed no module directory.`);
  // Built under a temporary name and renamed, so an interrupted build leaves no half binary in the cache.
  const partial = `${target}.partial-${process.pid}`;
  try {
    await runGo(['build', '-o', partial, './weed'], moduleDir);
    await fs.rename(partial, target);
  } finally {
    await fs.rm(partial, { force: true });
  }
  log(`SeaweedFS built: ${target}`);
  return target;
}

function runGo(args: string[], cwd: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, {
      cwd,
      env: { ...process.env, CGO_ENABLED: process.env.CGO_ENABLED ?? '0', GOFLAGS: '-buildvcs=false -mod=readonly' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', (error) =>
      reject(
        new Error(`Cannot run Go to build SeaweedFS (${error.message}); install Go ≥ 1.26 or set SEAWEEDFS_WEED.`),
      ),
    );
    child.on('exit', (code) => {
      if (code === 0) resolve(stdout);
      else {
        const tail = stderr.trim().split('\n').slice(-3).join(' | ');
        reject(new Error(`'go ${args.join(' ')}' failed with exit code ${code}: ${tail}`));
      }
    });
  });
}

export interface SeaweedServer {
  endpoint: string;
  bucket: string;
  dataDir: string;
  /** SIGKILL, as a crashed store (what a "killed mid-operation" test needs). */
  kill(): void;
  /** SIGSTOP / SIGCONT: a store that accepts connections and never answers. */
  pause(): void;
  resume(): void;
  /** SIGTERM, then SIGKILL after 5 s; removes the data. */
  stop(): Promise<void>;
}

/** A port p on 127.0.0.1 with p + 10000 (SeaweedFS's gRPC port) also free, both below 32768. */
async function portPair(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i += 1) {
    const port = 12000 + Math.floor(Math.random() * 10000);
    if (taken.has(port)) continue;
    if ((await bindable(port)) && (await bindable(port + 10000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port pair below 32768 for SeaweedFS');
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Starts `weed server -s3` on 127.0.0.1 (free ports below 32768, its data in a temporary directory,
 * one identity with `credentials`) and creates `bucket`; for tests and benchmarks, not production.
 */
export async function startWeedServer(options: {
  weed: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  readyTimeoutMs?: number;
}): Promise<SeaweedServer> {
  const { bucket } = options;
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'da-seaweedfs-'));
  const dataDir = path.join(base, 'data');
  await fs.mkdir(dataDir);
  const config = path.join(base, 's3.json');
  const identity = {
    name: 'durable-agent-test',
    credentials: [{ accessKey: options.credentials.accessKeyId, secretKey: options.credentials.secretAccessKey }],
    actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
  };
  await fs.writeFile(config, JSON.stringify({ identities: [identity] }));
  const taken = new Set<number>();
  const [master, volume, filer, s3] = [
    await portPair(taken),
    await portPair(taken),
    await portPair(taken),
    await portPair(taken),
  ];
  const args = [
    'server',
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-dir=${dataDir}`,
    `-master.port=${master}`,
    '-master.telemetry=false',
    '-master.volumeSizeLimitMB=128',
    '-volume.max=64',
    `-volume.port=${volume}`,
    `-filer.port=${filer}`,
    '-s3',
    `-s3.port=${s3}`,
    `-s3.config=${config}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
  ];
  const log = path.join(base, 'weed.log');
  const out = await fs.open(log, 'w');
  const child: ChildProcess = spawn(options.weed, args, { stdio: ['ignore', out.fd, out.fd] });
  await out.close();
  const endpoint = `http://127.0.0.1:${s3}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await fs.rm(base, { recursive: true, force: true });
  };
  try {
    await createBucket(endpoint, bucket, options.credentials, child, readyTimeoutMs);
  } catch (error) {
    const tail = (await fs.readFile(log, 'utf8').catch(() => '')).split('\n').slice(-15).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\nlast lines of weed's log:\n${tail}`);
  }
  return {
    endpoint,
    bucket,
    dataDir,
    kill: () => child.kill('SIGKILL'),
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async () => {
      child.kill('SIGCONT');
      await stop();
    },
  };
}

/** Creates the bucket, retrying until the server answers (it takes a few seconds to elect and start). */
async function createBucket(
  endpoint: string,
  bucket: string,
  credentials: { accessKeyId: string; secretAccessKey: string },
  child: ChildProcess,
  timeoutMs: number,
): Promise<void> {
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 },
  });
  const deadline = Date.now() + timeoutMs;
  let last = '';
  try {
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`SeaweedFS exited with code ${child.exitCode} before it was ready`);
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        return;
      } catch (error) {
        const name = (error as Error).name;
        if (name === 'BucketAlreadyOwnedByYou' || name === 'BucketAlreadyExists') return;
        last = `${name}: ${(error as Error).message}`;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error(`SeaweedFS's S3 endpoint ${endpoint} was not ready within ${timeoutMs} ms (last: ${last})`);
  } finally {
    client.destroy();
  }
}
