import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { bundleWorkflowCode, type NativeConnection } from '@temporalio/worker';
import { AGENT_WORKFLOW_MODULES, SHARED_WORKFLOW_MODULES, withoutSourcesContent } from '../src/worker/workflow-bundle';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { openSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { dataConverterFromEnv } from '../src/codec';
import { connectionOptions, describeConnection, loadConnectionConfig, type TemporalConfig } from '../src/client/config';
import { devServerArgs, freePort, waitUntilReachable } from '../src/server/dev-server';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../src/shared';
import { connectWorker } from '../src/worker';
import { findTemporalCli } from '../src/server/temporal-cli';

/**
 * The servers the bench runs on. `embedded` is exactly the dev server durable-agent starts
 * (`devServerArgs`: eager activity execution on, the history service's transfer-queue poll limit
 * lifted). `stock` keeps the dev server's default poll limit (20 per shard: with one shard, once the
 * limiter's burst is spent every workflow task and every activity not dispatched eagerly waits for
 * the next 50 ms slot) and only turns eager execution on, so workers decide eager on or off.
 */
export type ServerProfile = 'embedded' | 'stock';

const PROFILE_DYNAMIC_CONFIG: Record<ServerProfile, string[] | undefined> = {
  embedded: undefined,
  stock: ['system.enableActivityEagerExecution=true'],
};

export interface BenchServer {
  address: string;
  /** How to connect to it: plaintext for the servers the bench starts; as configured for an existing one. */
  connection: TemporalConfig;
  /** What the server is, for the report. */
  description: string;
  /** CPU time the server process has used so far (ms), when the bench started it and can read it. */
  cpuMs(): Promise<number | undefined>;
  stop(): Promise<void>;
}

/**
 * The server the environment names, used as it is in place of the `embedded` one: `TEMPORAL_ADDRESS`,
 * or a profile (`TEMPORAL_PROFILE`, `TEMPORAL_CONFIG_FILE`), with TLS, mTLS and API key as the
 * `temporal` CLI reads them (`loadConnectionConfig`). Undefined when none is named.
 */
export function externalServer(env: NodeJS.ProcessEnv = process.env): BenchServer | undefined {
  if (!env.TEMPORAL_ADDRESS && !env.TEMPORAL_PROFILE && !env.TEMPORAL_CONFIG_FILE) return undefined;
  const connection = loadConnectionConfig({ env });
  return {
    address: connection.address,
    connection,
    description: `existing server at ${describeConnection(connection)}`,
    cpuMs: async () => undefined,
    stop: async () => {},
  };
}

/**
 * The connection for a bench process given only the server's address (a forked worker): the
 * configured one when the address is the external server's, else plaintext to a server the bench
 * started.
 */
export function benchConnectionFor(address: string, env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const external = externalServer(env);
  return external?.address === address ? external.connection : plainConnection(address);
}

/** A worker connection to a bench server (TLS, API key and metadata when configured). */
export function connectBenchWorker(server: Pick<BenchServer, 'connection'>): Promise<NativeConnection> {
  return connectWorker(server.connection);
}

/**
 * A client of a bench server: its connection (TLS, API key), its namespace, `DURABLE_AGENT_CODEC_KEYS`'
 * codec as the workers use it, and any extra channel arguments (large history pages).
 */
export async function connectBenchClient(
  server: Pick<BenchServer, 'connection'>,
  channelArgs?: ConnectionOptions['channelArgs'],
): Promise<Client> {
  const connection = await Connection.connect({
    ...connectionOptions(server.connection),
    ...(channelArgs ? { channelArgs } : {}),
  });
  const dataConverter = dataConverterFromEnv();
  return new Client({
    connection,
    namespace: server.connection.namespace,
    ...(dataConverter ? { dataConverter } : {}),
  });
}

function plainConnection(address: string): TemporalConfig {
  return { address, namespace: DEFAULT_NAMESPACE, taskQueue: DEFAULT_TASK_QUEUE };
}

/** Starts an in-memory dev server on a free port with the profile's settings. */
export async function startBenchServer(
  profile: ServerProfile,
  workDir: string,
  log: (m: string) => void,
): Promise<BenchServer> {
  const cli = await findTemporalCli({ log });
  const address = `127.0.0.1:${await freePort()}`;
  const out = openSync(path.join(workDir, `temporal-server-${profile}.log`), 'a');
  const dynamicConfig = PROFILE_DYNAMIC_CONFIG[profile];
  const args = devServerArgs({ address, headless: true, ...(dynamicConfig ? { dynamicConfig } : {}) });
  const child = spawn(cli, args, { stdio: ['ignore', out, out] });
  await waitUntilReachable(address, 60_000, child);
  return {
    address,
    connection: plainConnection(address),
    description:
      `in-memory dev server (${await cliVersion(cli)}), ` +
      (dynamicConfig ? `stock settings + ${dynamicConfig.join(' ')}` : 'as durable-agent embeds it'),
    cpuMs: () => processCpuMs(child.pid),
    stop: () => stopChild(child),
  };
}

/**
 * Bundles each side's workflow on its own (a few seconds each): the returned file holds the agent's
 * workflow as the production bundle does (the same entry, `src/workflows`, and src/worker/workflow-bundle.ts:
 * the agent's preloaded modules, a source map without the sources' text); {@link naiveBundleOf} it holds
 * the naive baseline with the SDK's defaults but zod shared, which must not get the agent's own settings
 * (its promise stacks stay on, its map keeps the sources). So the agent's workflow code is evaluated once
 * per workflow thread, and the naive workflow's module (and the few `@temporalio/workflow` modules it
 * reaches that the SDK does not already share) once per run, as a bundle with the SDK's defaults does;
 * neither side's runs pay for evaluating the other's code.
 */
export async function bundleBenchWorkflows(workDir: string): Promise<string> {
  const file = path.join(workDir, 'bench-workflow-bundle.js');
  await writeBundle(file, require.resolve('../src/workflows'), AGENT_WORKFLOW_MODULES, withoutSourcesContent);
  await writeBundle(naiveBundleOf(file), require.resolve('./naive-workflow'), SHARED_WORKFLOW_MODULES, (code) => code);
  return file;
}

/** The naive baseline's bundle next to the one `bundleBenchWorkflows` returned. */
export function naiveBundleOf(bundlePath: string): string {
  return bundlePath.replace(/\.js$/, '-naive.js');
}

async function writeBundle(
  file: string,
  workflowsPath: string,
  preloadModules: readonly string[],
  finish: (code: string) => string,
): Promise<void> {
  const noop = () => {};
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    preloadModules: [...preloadModules],
    logger: { trace: noop, debug: noop, info: noop, warn: console.warn, error: console.error, log: noop },
  });
  await fs.writeFile(file, finish(code));
}

async function cliVersion(cli: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(cli, ['--version']);
    // "temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)"
    return /\((Server [^,)]+)/.exec(stdout)?.[1] ?? stdout.trim();
  } catch {
    return 'unknown version';
  }
}

/**
 * User + system CPU time of another process from /proc (Linux only; undefined elsewhere). Clock
 * ticks are taken as 100 per second, the value on every mainstream Linux build.
 */
async function processCpuMs(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

export async function makeWorkDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-bench-'));
}
