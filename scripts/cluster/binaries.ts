import { execFile, spawn } from 'node:child_process';
import { promises as fs, constants as fsConstants } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cacheDir } from '../../src/server/temporal-cli';

/**
 * The Temporal server and its SQL schema tool, built from their Go module (the server
 * the CLI v1.5.1 embeds; that module version has no `replace` directives, so `go install` takes it) and cached per user next to the CLI, so fresh clones
 * and CI checkouts reuse one build. The PostgreSQL schema files come from the same module and are
 * copied into the cache too, so a later run needs neither Go nor the module cache.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const MODULE = 'go.temporal.io/server';
const PACKAGES = [`${MODULE}/cmd/server`, `${MODULE}/cmd/tools/sql`];

export interface ServerBinaries {
  /** `temporal-server` (installed as `server`). */
  server: string;
  /** The schema tool `temporal-sql-tool` (installed as `sql`). */
  sql: string;
  /** `schema/postgresql/v12` of the module: `temporal/versioned` and `visibility/versioned` inside. */
  schemaDir: string;
}

export function serverCacheDir(): string {
  return path.join(cacheDir(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

export function cachedServerBinaries(): ServerBinaries {
  const dir = serverCacheDir();
  return {
    server: path.join(dir, 'server'),
    sql: path.join(dir, 'sql'),
    schemaDir: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

/**
 * The cached binaries and schema, building what is missing with `go install` (about 4 minutes on 2
 * CPUs with Go's module and build caches warm from the CLI build; see .ci/run for a cold one).
 * Throws a message naming what to install when Go is missing.
 */
export async function ensureServerBinaries(log: (m: string) => void = () => {}): Promise<ServerBinaries> {
  const found = cachedServerBinaries();
  const dir = serverCacheDir();
  if (!(await isExecutable(found.server)) || !(await isExecutable(found.sql))) {
    log(`building the Temporal server ${TEMPORAL_SERVER_VERSION} and its sql tool from Go (first time only)…`);
    await fs.mkdir(dir, { recursive: true });
    await goInstall(dir).catch((err: Error) => {
      throw new Error(
        `Could not build the Temporal server (${err.message}). Install Go ≥ 1.23 and run ` +
          `'GOBIN=${dir} go install ${PACKAGES.map((p) => `${p}@${TEMPORAL_SERVER_VERSION}`).join(' ')}'.`,
      );
    });
    log(`Temporal server built into ${dir}`);
  }
  if (!(await exists(path.join(found.schemaDir, 'temporal', 'versioned')))) {
    const moduleDir = await moduleSourceDir();
    const tmp = `${found.schemaDir}.tmp-${process.pid}`;
    await fs.rm(tmp, { recursive: true, force: true });
    await fs.mkdir(path.dirname(tmp), { recursive: true });
    await fs.cp(path.join(moduleDir, 'schema', 'postgresql', 'v12'), tmp, { recursive: true });
    // Module cache files are read-only; the copy need not be.
    await promisify(execFile)('chmod', ['-R', 'u+w', tmp]);
    await fs.rename(tmp, found.schemaDir).catch(async (err: NodeJS.ErrnoException) => {
      await fs.rm(tmp, { recursive: true, force: true });
      if (!(await exists(found.schemaDir))) throw err; // else another process copied it first
    });
  }
  return found;
}

/** Where `go mod download` puts the module's source (its schema files live there). */
async function moduleSourceDir(): Promise<string> {
  const { stdout } = await promisify(execFile)(
    'go',
    ['mod', 'download', '-json', `${MODULE}@${TEMPORAL_SERVER_VERSION}`],
    {
      maxBuffer: 1024 * 1024,
    },
  );
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`'go mod download -json ${MODULE}@${TEMPORAL_SERVER_VERSION}' named no Dir: ${stdout}`);
  return dir;
}

function goInstall(binDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['install', ...PACKAGES.map((p) => `${p}@${TEMPORAL_SERVER_VERSION}`)], {
      env: { ...process.env, GOBIN: binDir, CGO_ENABLED: process.env.CGO_ENABLED ?? '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`go install exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}
