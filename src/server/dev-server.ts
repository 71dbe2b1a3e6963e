import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../shared/search-attributes';
import { findTemporalCli } from './temporal-cli';

export const DEFAULT_UI_PORT = 8233;

/** Where the embedded server keeps its SQLite database and log. */
export function dataDir(): string {
  const base = process.env.XDG_DATA_HOME || path.join(os.homedir(), '.local', 'share');
  return path.join(base, 'durable-agent');
}

export function parseAddress(address: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(address);
  if (!match || !match[1] || !match[2]) {
    throw new Error(`Invalid Temporal address '${address}': expected host:port, e.g. 127.0.0.1:7233`);
  }
  return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) };
}

/** True when something accepts TCP connections at `address`. */
export function isReachable(address: string, timeoutMs = 1000): Promise<boolean> {
  const { host, port } = parseAddress(address);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A TCP port on 127.0.0.1 that nothing listens on right now, for a dev server of its own. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export async function waitUntilReachable(address: string, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) {
      throw new Error(`the Temporal dev server exited with code ${child.exitCode} before it was ready`);
    }
    if (await isReachable(address, 500)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the Temporal dev server did not answer at ${address} within ${timeoutMs} ms`);
}

/**
 * Dynamic config of the embedded server, measured with `npm run bench`: eager activity dispatch
 * (an activity starts in the workflow task's response, skipping a dispatch round trip) and a
 * transfer-queue poll rate above the default 20/s, which otherwise makes every workflow task and
 * activity on the single-shard dev server wait for a 50 ms slot (98 → 26 ms per iteration).
 */
export const DEV_SERVER_DYNAMIC_CONFIG = [
  'system.enableActivityEagerExecution=true',
  'history.transferProcessorMaxPollRPS=1000',
];

export interface DevServerOptions {
  address: string;
  uiPort?: number;
  /** SQLite file; omit for an in-memory server (tests). */
  dbFile?: string;
  headless?: boolean;
  namespace?: string;
  /** `KEY=VALUE` dynamic config; defaults to {@link DEV_SERVER_DYNAMIC_CONFIG}. */
  dynamicConfig?: readonly string[];
}

export function devServerArgs(options: DevServerOptions): string[] {
  const { host, port } = parseAddress(options.address);
  const args = ['server', 'start-dev', '--ip', host, '--port', String(port), '--log-level', 'warn'];
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  for (const { name, cliType } of SEARCH_ATTRIBUTE_DEFINITIONS) args.push('--search-attribute', `${name}=${cliType}`);
  for (const setting of options.dynamicConfig ?? DEV_SERVER_DYNAMIC_CONFIG)
    args.push('--dynamic-config-value', setting);
  if (options.headless) args.push('--headless');
  // As the `temporal` CLI does: the Web UI on the server's port + 1000 (7233 → 8233), so a server on
  // another port (a test's) does not need the default UI port free.
  else args.push('--ui-port', String(options.uiPort ?? port + (DEFAULT_UI_PORT - 7233)));
  return args;
}

/**
 * Starts the embedded dev server in the background (it outlives this process) with SQLite
 * persistence, and waits until it answers. Its log goes next to the database.
 */
export async function startBackgroundDevServer(
  options: DevServerOptions & { log?: (m: string) => void },
): Promise<{ pid: number; dbFile: string; logFile: string }> {
  const cli = await findTemporalCli({ log: options.log });
  const dir = dataDir();
  await fs.mkdir(dir, { recursive: true });
  const dbFile = options.dbFile ?? path.join(dir, 'temporal.db');
  const logFile = path.join(dir, 'temporal-server.log');
  const out = openSync(logFile, 'a');
  const child = spawn(cli, devServerArgs({ ...options, dbFile }), {
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  await waitUntilReachable(options.address, 60_000, child);
  await fs.writeFile(path.join(dir, 'temporal-server.pid'), String(child.pid));
  return { pid: child.pid ?? -1, dbFile, logFile };
}

/** Runs the dev server in the foreground until it exits (the `server` command). */
export async function runForegroundDevServer(
  options: DevServerOptions & { log?: (m: string) => void },
): Promise<number> {
  const cli = await findTemporalCli({ log: options.log });
  const dir = dataDir();
  await fs.mkdir(dir, { recursive: true });
  const dbFile = options.dbFile ?? path.join(dir, 'temporal.db');
  const child = spawn(cli, devServerArgs({ ...options, dbFile }), { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 0)));
}

/** The Web UI page of one run. `TEMPORAL_UI_URL` points it at another UI (e.g. docker compose). */
export function webUiLink(namespace: string, workflowId: string, runId?: string): string {
  const base = (process.env.TEMPORAL_UI_URL ?? `http://127.0.0.1:${DEFAULT_UI_PORT}`).replace(/\/$/, '');
  const id = encodeURIComponent(workflowId);
  return runId
    ? `${base}/namespaces/${namespace}/workflows/${id}/${runId}/history`
    : `${base}/namespaces/${namespace}/workflows/${id}`;
}
