import {
  loadClientConfig,
  loadClientConfigProfile,
  toClientOptions,
  type ClientConfigProfile,
} from '@temporalio/envconfig';
import type { ConfigDataSource } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE, DEFAULT_TEMPORAL_ADDRESS } from '../shared';

/**
 * Where and how to reach Temporal, read once at the edges (docs/connection.md) the way the `temporal` CLI
 * and every Temporal SDK read it (`@temporalio/envconfig`): the TOML profiles file, then the
 * `TEMPORAL_*` environment on top. `taskQueue` is durable-agent's own (`TEMPORAL_TASK_QUEUE`).
 * Plain data: certificates are already read, so connecting opens no file.
 */
export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /**
   * Absent: plaintext, unless an API key is set (then TLS with the system's root certificates).
   * `true`: TLS with the system's root certificates. `false`: TLS turned off (`TEMPORAL_TLS=false`,
   * a profile's `tls.disabled = true`): plaintext even with an API key, as the `temporal` CLI does.
   */
  tls?: TLSConfig | boolean;
  /** Sent as `authorization: Bearer <key>` on every call (and turns TLS on unless TLS is disabled). */
  apiKey?: string;
  /** gRPC metadata sent on every call (`TEMPORAL_GRPC_META_*`, a profile's `grpc_meta`). */
  metadata?: Record<string, string>;
  /** The profile that supplied settings, and the file it came from. */
  profile?: string;
  configFile?: string;
}

/** A connection setting that cannot be used: a bad profile name, an unreadable certificate, malformed TOML. */
export class ConnectionConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionConfigError';
  }
}

export interface LoadConnectionOptions {
  /** `--profile`: a profile of the config file; default `TEMPORAL_PROFILE`, then `default`. */
  profile?: string;
  env?: NodeJS.ProcessEnv;
}

/** Booleans as the Go loader (the `temporal` CLI) accepts them; anything else is refused, not guessed. */
const BOOLEAN_ENV = ['TEMPORAL_TLS', 'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION'] as const;

/**
 * The connection: the profile (`profile`, else `TEMPORAL_PROFILE`, else `default` when the file has
 * one) of `TEMPORAL_CONFIG_FILE` (default `~/.config/temporalio/temporal.toml`), overridden by
 * `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS*` and
 * `TEMPORAL_GRPC_META_*`. Throws `ConnectionConfigError` (one readable line) for what cannot be used.
 */
export function loadConnectionConfig(options: LoadConnectionOptions = {}): TemporalConfig {
  const env = usableEnv(options.env ?? process.env);
  const configFile = configFilePath(env);
  const profileName = options.profile ?? env.TEMPORAL_PROFILE;
  if (profileName !== undefined && profileName.trim() === '') throw new ConnectionConfigError('--profile needs a name');
  if (env.TEMPORAL_CONFIG_FILE !== undefined) mustBeReadable(env.TEMPORAL_CONFIG_FILE, 'TEMPORAL_CONFIG_FILE');
  if (env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === 'true') {
    throw new ConnectionConfigError(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the TypeScript SDK, which always verifies the ' +
        "server's certificate: set TEMPORAL_TLS_SERVER_NAME to a name in it, or TEMPORAL_TLS_SERVER_CA_CERT_PATH to its CA",
    );
  }
  const names = profileNames(configFile, env);
  if (profileName !== undefined && !names.includes(profileName)) {
    const where = configFile ?? 'the Temporal config file';
    throw new ConnectionConfigError(
      `no profile '${profileName}' in ${where}` +
        (!configFile || !existsSync(configFile)
          ? ' (no such file: write it, or point TEMPORAL_CONFIG_FILE at yours)'
          : names.length
            ? `; its profiles: ${names.join(', ')}`
            : '; it has none'),
    );
  }
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ ...(profileName ? { profile: profileName } : {}), overrideEnvVars: env });
  } catch (err) {
    throw new ConnectionConfigError(`cannot use the Temporal connection settings: ${firstLine(err)}`);
  }
  const connect = toClientOptions(withCertificatesRead(profile, env));
  const { address, tls, apiKey } = connect.connectionOptions;
  const metadata = profile.grpcMeta;
  if (address && !/^(\[[^\]]+\]|[^:\s]+):\d{1,5}$/.test(address)) {
    const from = env.TEMPORAL_ADDRESS !== undefined ? 'TEMPORAL_ADDRESS' : `the profile's address`;
    throw new ConnectionConfigError(`${from} must be host:port (e.g. 127.0.0.1:7233), got '${address}'`);
  }
  return {
    address: address || DEFAULT_TEMPORAL_ADDRESS,
    namespace: connect.namespace || DEFAULT_NAMESPACE,
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    ...(tls ? { tls: tls === true ? true : (tls as TLSConfig) } : {}),
    // Kept only when it matters: the SDKs turn TLS on for an API key unless told `false`.
    ...(tls === false && apiKey ? { tls: false } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(metadata && Object.keys(metadata).length ? { metadata } : {}),
    ...(names.includes(profileName ?? 'default')
      ? { profile: profileName ?? 'default', ...(configFile ? { configFile } : {}) }
      : {}),
  };
}

/** The connection from the environment alone (and `TEMPORAL_PROFILE`): `loadConnectionConfig({ env })`. */
export function temporalConfig(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  return loadConnectionConfig({ env });
}

/** The options `Connection.connect` (client) and `NativeConnection.connect` (worker) both take. */
export function connectionOptions(config: TemporalConfig): {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
} {
  return {
    address: config.address,
    ...(config.tls !== undefined ? { tls: config.tls } : {}),
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.metadata ? { metadata: { ...config.metadata } } : {}),
  };
}

/** True when the embedded dev server may stand in: a loopback address with no TLS and no API key. */
export function mayStartEmbeddedServer(config: TemporalConfig): boolean {
  if (config.tls || config.apiKey) return false;
  const host = /^(.*):\d+$/.exec(config.address)?.[1]?.replace(/^\[|\]$/g, '');
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

/** The connection in words for messages and logs: never a key, a certificate or a metadata value. */
export function describeConnection(config: TemporalConfig): string {
  const parts = [`${config.address} (namespace ${config.namespace}`];
  if (config.tls) {
    const tls = config.tls === true ? {} : config.tls;
    const details = [
      tls.serverRootCACertificate ? 'server CA given' : 'system CAs',
      ...(tls.clientCertPair ? ['client certificate'] : []),
      ...(tls.serverNameOverride ? [`server name ${tls.serverNameOverride}`] : []),
    ];
    parts.push(`TLS: ${details.join(', ')}`);
  }
  if (config.apiKey) parts.push('API key');
  if (config.metadata) parts.push(`gRPC metadata ${Object.keys(config.metadata).join(', ')}`);
  if (config.profile) parts.push(`profile '${config.profile}'${config.configFile ? ` of ${config.configFile}` : ''}`);
  return `${parts.join(', ')})`;
}

/**
 * The environment as the Go loader reads it: an empty `TEMPORAL_*` value means the default there
 * (an empty address or path), and booleans are `1|0|true|false` in any case. `@temporalio/envconfig`
 * reads `TEMPORAL_TLS=` as false and `TRUE` as false; normalize before it sees them.
 */
function usableEnv(raw: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (value === '' && key.startsWith('TEMPORAL_') && !key.startsWith('TEMPORAL_GRPC_META_')) continue;
    env[key] = value;
  }
  for (const key of BOOLEAN_ENV) {
    const value = env[key];
    if (value === undefined) continue;
    const lower = value.toLowerCase();
    if (!['1', '0', 'true', 'false'].includes(lower)) {
      throw new ConnectionConfigError(`${key} must be true, false, 1 or 0, got '${value}'`);
    }
    env[key] = lower === '1' ? 'true' : lower === '0' ? 'false' : lower;
  }
  return env;
}

/**
 * The profiles file a worker with this environment reads, for the workspace rules (docs/file-safety.md):
 * as {@link configFilePath}, the user's home directory standing in for a `HOME` the environment lacks.
 */
export function temporalConfigFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const given: Record<string, string> = {};
  for (const name of ['TEMPORAL_CONFIG_FILE', 'XDG_CONFIG_HOME', 'HOME', 'APPDATA'] as const) {
    const value = env[name]?.trim();
    if (value) given[name] = value;
  }
  given.HOME ??= os.homedir();
  return configFilePath(given) ?? path.join(given.HOME, '.config', 'temporalio', 'temporal.toml');
}

/** The file `@temporalio/envconfig` reads profiles from (Linux and macOS paths; Windows: %APPDATA%). */
function configFilePath(env: Record<string, string>): string | undefined {
  if (env.TEMPORAL_CONFIG_FILE) return env.TEMPORAL_CONFIG_FILE;
  const platform = os.platform();
  if (platform === 'win32') return env.APPDATA ? path.join(env.APPDATA, 'temporalio', 'temporal.toml') : undefined;
  if (platform === 'darwin') {
    return env.HOME ? path.join(env.HOME, 'Library', 'Application Support', 'temporalio', 'temporal.toml') : undefined;
  }
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : undefined;
  const dir = base ?? (env.HOME ? path.join(env.HOME, '.config') : undefined);
  return dir ? path.join(dir, 'temporalio', 'temporal.toml') : undefined;
}

function mustBeReadable(file: string, setting: string): void {
  try {
    readFileSync(file);
  } catch (err) {
    throw new ConnectionConfigError(`cannot read the Temporal config file ${file} (${setting}): ${reason(err)}`);
  }
}

/**
 * The profiles of the config file (none when there is no file). Malformed TOML is named with its
 * position; the parser's code frame is left out.
 */
function profileNames(file: string | undefined, env: Record<string, string>): string[] {
  try {
    return Object.keys(loadClientConfig({ overrideEnvVars: env }).profiles);
  } catch (err) {
    const where = file ?? 'the Temporal config file';
    if ((err as { code?: string }).code) throw new ConnectionConfigError(`cannot read ${where}: ${reason(err)}`);
    if ((err as Error).constructor?.name === 'TomlError') {
      // Its message ends in a code frame of the file: keep the first line and the position.
      const { line, column } = err as { line?: number; column?: number };
      const at = line !== undefined ? ` (line ${line}${column !== undefined ? `, column ${column}` : ''})` : '';
      throw new ConnectionConfigError(`cannot parse ${where} as TOML${at}: ${firstLine(err)}`);
    }
    throw new ConnectionConfigError(`cannot use the Temporal connection settings in ${where}: ${firstLine(err)}`);
  }
}

const TLS_SETTINGS = {
  serverCACert: { env: 'TEMPORAL_TLS_SERVER_CA_CERT', toml: 'server_ca_cert', kind: 'certificate' },
  clientCert: { env: 'TEMPORAL_TLS_CLIENT_CERT', toml: 'client_cert', kind: 'certificate' },
  clientKey: { env: 'TEMPORAL_TLS_CLIENT_KEY', toml: 'client_key', kind: 'key' },
} as const;

/**
 * The profile with every certificate and key read and checked here, so that a missing file or one
 * that holds no PEM certificate is named (with the setting that points at it) before connecting.
 */
function withCertificatesRead(profile: ClientConfigProfile, env: Record<string, string>): ClientConfigProfile {
  const tls = profile.tls;
  if (!tls || tls.disabled) return profile;
  const read = { ...tls };
  for (const field of Object.keys(TLS_SETTINGS) as (keyof typeof TLS_SETTINGS)[]) {
    const source = tls[field];
    if (source) read[field] = { data: readPem(source, TLS_SETTINGS[field], env) };
  }
  if (Boolean(read.clientCert) !== Boolean(read.clientKey)) {
    throw new ConnectionConfigError(
      'a client certificate needs its key and a key its certificate: set both TEMPORAL_TLS_CLIENT_CERT_PATH and ' +
        'TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA), or neither',
    );
  }
  return { ...profile, tls: read };
}

function readPem(
  source: ConfigDataSource,
  setting: (typeof TLS_SETTINGS)[keyof typeof TLS_SETTINGS],
  env: Record<string, string>,
): Uint8Array {
  const fromPath = 'path' in source;
  const variable = `${setting.env}_${fromPath ? 'PATH' : 'DATA'}`;
  const name =
    env[variable] !== undefined ? variable : `the profile's tls.${setting.toml}_${fromPath ? 'path' : 'data'}`;
  let bytes: Uint8Array;
  if ('path' in source) {
    try {
      bytes = readFileSync(source.path);
    } catch (err) {
      throw new ConnectionConfigError(
        `cannot read the TLS ${setting.kind} file ${source.path} (${name}): ${reason(err)}`,
      );
    }
  } else {
    bytes = typeof source.data === 'string' ? Buffer.from(source.data) : source.data;
  }
  try {
    if (setting.kind === 'key') createPrivateKey(Buffer.from(bytes));
    else new X509Certificate(Buffer.from(bytes));
  } catch {
    const what = fromPath ? `${source.path} (${name})` : name;
    throw new ConnectionConfigError(`${what} holds no PEM ${setting.kind === 'key' ? 'private key' : 'certificate'}`);
  }
  return bytes;
}

function reason(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return firstLine(err);
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}
