import type { TLSConfig } from '@temporalio/client';
import { execFile } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { findTemporalCli } from '../../src/server/temporal-cli';
import { ensureServerBinaries } from './binaries';
import { freeLowPorts } from './ports';
import { Postgres, POSTGRES_USER, type StopMode } from './postgres';
import { ServerProcess, waitForFrontend, waitForNamespace } from './temporal-server';

/**
 * A production-like Temporal cluster for tests and the bench: the Temporal server built from its Go
 * module on a throwaway PostgreSQL, configured by the checked-in deploy/temporal/config/cluster.yaml
 * (the file docker-compose.yml runs too), TLS on the frontend with certificates made by
 * deploy/tls/make-certs.sh, schema and namespace set up by deploy/temporal/setup-*.sh. Everything
 * lives in one temporary directory; `stop()` removes it.
 */
export interface ClusterOptions {
  log?: (message: string) => void;
  /** Require client certificates (mTLS); `tls.clientCertPath`/`clientKeyPath` then name one. */
  mtls?: boolean;
  /** Default 4, as Temporal's development configs. */
  numHistoryShards?: number;
  /** The server's log level (default warn). */
  logLevel?: string;
}

export interface ClusterTls {
  caPath: string;
  serverName: string;
  clientCertPath?: string;
  clientKeyPath?: string;
}

export interface Cluster {
  /** `127.0.0.1:<port>` of the frontend (TLS). */
  address: string;
  namespace: string;
  tls: ClusterTls;
  /** The connection as every Temporal client reads it from the environment (`TEMPORAL_*`). */
  env: Record<string, string>;
  /** The temporary directory: certificates, PostgreSQL's data, logs. */
  dir: string;
  serverLog: string;
  /** Options for `Connection.connect` / `NativeConnection.connect`. */
  connectionOptions(): { address: string; tls: TLSConfig };
  /** The Temporal server process's pid (changes with every restart). */
  serverPid(): number | undefined;
  /** Stops the server (SIGTERM, or SIGKILL with `kill`) and starts it again on the same ports. */
  restartServer(options?: { kill?: boolean }): Promise<void>;
  /** Restarts PostgreSQL; `immediate` is a crash of the postmaster (recovery from WAL). */
  restartPostgres(mode?: StopMode): Promise<void>;
  stop(): Promise<void>;
}

const SERVER_NAME = 'temporal';
const NAMESPACE = 'default';
const PORT_NAMES = [
  'FRONTEND_GRPC_PORT',
  'FRONTEND_HTTP_PORT',
  'FRONTEND_MEMBERSHIP_PORT',
  'HISTORY_GRPC_PORT',
  'HISTORY_MEMBERSHIP_PORT',
  'MATCHING_GRPC_PORT',
  'MATCHING_MEMBERSHIP_PORT',
  'WORKER_GRPC_PORT',
  'WORKER_MEMBERSHIP_PORT',
] as const;

/** The repository's deploy/ directory, from source (scripts/cluster) or compiled (dist/scripts/cluster). */
export function deployDir(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'deploy', 'temporal', 'config', 'cluster.yaml'))) return path.join(dir, 'deploy');
  }
  throw new Error(`deploy/temporal/config/cluster.yaml not found above ${__dirname}`);
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const log = options.log ?? (() => {});
  const [binaries, cli] = await Promise.all([ensureServerBinaries(log), findTemporalCli({ log })]);
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-cluster-')));
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    const deploy = deployDir();
    const certs = path.join(dir, 'certs');
    await promisify(execFile)('sh', [path.join(deploy, 'tls', 'make-certs.sh'), certs, SERVER_NAME, 'localhost']);
    const tls: ClusterTls = {
      caPath: path.join(certs, 'ca.pem'),
      serverName: SERVER_NAME,
      ...(options.mtls
        ? { clientCertPath: path.join(certs, 'client.pem'), clientKeyPath: path.join(certs, 'client.key') }
        : {}),
    };

    const ports = await freeLowPorts(PORT_NAMES.length + 1);
    const pgPort = ports.pop() as number;
    log(`PostgreSQL on 127.0.0.1:${pgPort}`);
    const postgres = await Postgres.start({ dir: path.join(dir, 'postgres'), port: pgPort, log });
    cleanups.push(() => postgres.stop());

    const serverEnv = clusterServerEnv({ dbPort: pgPort, ports, certs, deploy, ...options });
    const dbEnv = Object.fromEntries(Object.entries(serverEnv).filter(([name]) => name.startsWith('DB_')));
    await runScript(path.join(deploy, 'temporal', 'setup-schema.sh'), {
      ...dbEnv,
      SQL_TOOL: binaries.sql,
      SCHEMA_DIR: binaries.schemaDir,
    });

    const address = `127.0.0.1:${serverEnv.FRONTEND_GRPC_PORT}`;
    const serverLog = path.join(dir, 'temporal-server.log');
    const server = new ServerProcess(binaries, serverArgs, path.join(deploy, 'temporal'), serverEnv, serverLog);
    cleanups.unshift(() => server.down());

    const connectionOptions = () => ({ address, tls: tlsConfig(tls) });
    const env: Record<string, string> = {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: tls.caPath,
      TEMPORAL_TLS_SERVER_NAME: tls.serverName,
      ...(tls.clientCertPath && tls.clientKeyPath
        ? { TEMPORAL_TLS_CLIENT_CERT_PATH: tls.clientCertPath, TEMPORAL_TLS_CLIENT_KEY_PATH: tls.clientKeyPath }
        : {}),
    };
    const up = async () => {
      await server.up();
      await waitForFrontend(connectionOptions(), server, 120_000);
    };
    log(`Temporal server ${address} (TLS), log ${serverLog}`);
    await up();

    // The namespace and search attributes, as compose sets them up: the same script and CLI, over TLS.
    const home = path.join(dir, 'home');
    await fs.mkdir(home);
    await runScript(path.join(deploy, 'temporal', 'setup-namespace.sh'), {
      ...env,
      TEMPORAL_CLI: cli,
      HOME: home,
    });
    await waitForNamespace(connectionOptions(), NAMESPACE, 60_000);

    return {
      address,
      namespace: NAMESPACE,
      tls,
      env,
      dir,
      serverLog,
      connectionOptions,
      serverPid: () => server.pid,
      async restartServer(restart = {}) {
        await server.down(restart.kill ? 'SIGKILL' : 'SIGTERM');
        await up();
      },
      async restartPostgres(mode: StopMode = 'fast') {
        await postgres.restart(mode);
      },
      async stop() {
        for (const cleanup of cleanups) await cleanup().catch((err) => log(`cluster stop: ${String(err)}`));
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    const tail = await fs.readFile(path.join(dir, 'temporal-server.log'), 'utf8').catch(() => '');
    throw new Error(
      `${(err as Error).message}\n(cluster files kept in ${dir})${tail ? `\nserver log tail:\n${tail.split('\n').slice(-30).join('\n')}` : ''}`,
    );
  }
}

/** How the server is started (compose runs the same, with its own root): `server <args>`. */
export function serverArgs(root: string): string[] {
  return ['--root', root, '--config', 'config', '--env', 'cluster', '--allow-no-auth', 'start'];
}

/**
 * The environment deploy/temporal/config/cluster.yaml is rendered with for the test cluster
 * (compose sets the same names for its containers; test/deploy/compose.test.ts compares them).
 */
export function clusterServerEnv(options: {
  dbPort: number;
  ports: number[];
  certs: string;
  deploy: string;
  mtls?: boolean;
  numHistoryShards?: number;
  logLevel?: string;
}): Record<string, string> {
  const ca = path.join(options.certs, 'ca.pem');
  return {
    DB_HOST: '127.0.0.1',
    DB_PORT: String(options.dbPort),
    DB_USER: POSTGRES_USER,
    DB_PASSWORD: 'unused',
    ...Object.fromEntries(PORT_NAMES.map((name, i) => [name, String(options.ports[i])])),
    TLS_CERT: path.join(options.certs, 'server.pem'),
    TLS_KEY: path.join(options.certs, 'server.key'),
    TLS_CA: ca,
    TLS_SERVER_NAME: SERVER_NAME,
    ...(options.mtls ? { TLS_CLIENT_CA: ca } : {}),
    NUM_HISTORY_SHARDS: String(options.numHistoryShards ?? 4),
    LOG_LEVEL: options.logLevel ?? 'warn',
    BIND_ON_IP: '127.0.0.1',
    DYNAMIC_CONFIG_FILE: path.join(options.deploy, 'temporal', 'config', 'dynamicconfig', 'cluster.yaml'),
  };
}

export function tlsConfig(tls: ClusterTls): TLSConfig {
  return {
    serverNameOverride: tls.serverName,
    serverRootCACertificate: readSync(tls.caPath),
    ...(tls.clientCertPath && tls.clientKeyPath
      ? { clientCertPair: { crt: readSync(tls.clientCertPath), key: readSync(tls.clientKeyPath) } }
      : {}),
  };
}

function readSync(file: string): Buffer {
  return readFileSync(file);
}

function runScript(script: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'sh',
      [script],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...env }, timeout: 180_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${path.basename(script)} failed: ${err.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}
