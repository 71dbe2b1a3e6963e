import { execFile, spawn } from 'node:child_process';
import { promises as fs, constants as fsConstants } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The Temporal CLI version we build: the newest tag without `replace` directives (a `replace` directive makes `go install` refuse the module). */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const GO_MODULE = 'github.com/temporalio/cli/cmd/temporal';

export interface FindCliOptions {
  /** Build or download the CLI when it is not found (default true). */
  install?: boolean;
  /** Progress messages (to stderr in the CLI). */
  log?: (message: string) => void;
}

/** Per-user cache folder, outside any clone, so fresh clones and CI checkouts reuse one build. */
export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'durable-agent');
}

export function cachedCliPath(): string {
  return path.join(cacheDir(), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

async function onPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Finds the Temporal CLI, in order: `TEMPORAL_CLI` → `temporal` on PATH → the cached build →
 * `go install` into the cache → the official download where the internet is reachable. Throws an
 * error that names exactly what to install when none of these works. Instant when cached.
 */
export async function findTemporalCli(options: FindCliOptions = {}): Promise<string> {
  const log = options.log ?? (() => {});
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (await isExecutable(fromEnv)) return fromEnv;
    throw new Error(`TEMPORAL_CLI is set to '${fromEnv}', which is not an executable file.`);
  }
  const found = (await onPath('temporal')) ?? ((await isExecutable(cachedCliPath())) ? cachedCliPath() : undefined);
  if (found) return found;
  if (options.install === false) {
    throw new Error(`Temporal CLI not found. Run 'npm run setup' to build it into ${cachedCliPath()}.`);
  }

  const target = cachedCliPath();
  await fs.mkdir(path.dirname(target), { recursive: true });
  const goBinary = await onPath('go');
  const problems: string[] = [];
  if (goBinary) {
    log(`Building the Temporal CLI ${TEMPORAL_CLI_VERSION} from its Go module (first time only, a few minutes)…`);
    try {
      await goInstall(goBinary, path.dirname(target));
      if (await isExecutable(target)) {
        log(`Temporal CLI built: ${target}`);
        return target;
      }
      problems.push('go install finished but produced no binary');
    } catch (err) {
      problems.push(`go install failed: ${(err as Error).message}`);
    }
  } else {
    problems.push('Go is not installed');
  }

  log('Trying to download the Temporal CLI…');
  try {
    await downloadCli(target);
    log(`Temporal CLI downloaded: ${target}`);
    return target;
  } catch (err) {
    problems.push(`download failed: ${(err as Error).message}`);
  }

  throw new Error(
    `Could not find or install the Temporal CLI (${problems.join('; ')}). Install one of: ` +
      `Go ≥ 1.23 (then re-run; it runs 'go install ${GO_MODULE}@${TEMPORAL_CLI_VERSION}'), ` +
      `or the Temporal CLI itself (https://docs.temporal.io/cli) on PATH, or set TEMPORAL_CLI to its path.`,
  );
}

function goInstall(goBinary: string, binDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(goBinary, ['install', `${GO_MODULE}@${TEMPORAL_CLI_VERSION}`], {
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
      else reject(new Error(`exit code ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/** The official archive, the same one the Temporal SDK's test server download uses. */
async function downloadCli(target: string): Promise<void> {
  const platform = process.platform === 'darwin' ? 'darwin' : process.platform === 'win32' ? 'windows' : 'linux';
  const arch = process.arch === 'arm64' ? 'arm64' : 'amd64';
  const url = `https://temporal.download/cli/archive/${TEMPORAL_CLI_VERSION}?platform=${platform}&arch=${arch}`;
  const response = await fetch(url, { signal: AbortSignal.timeout(20_000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const archive = path.join(path.dirname(target), 'temporal-cli.tar.gz');
  await fs.writeFile(archive, Buffer.from(await response.arrayBuffer()));
  await new Promise<void>((resolve, reject) =>
    execFile('tar', ['-xzf', archive, '-C', path.dirname(target), 'temporal'], (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  await fs.rm(archive, { force: true });
  await fs.chmod(target, 0o755);
}
