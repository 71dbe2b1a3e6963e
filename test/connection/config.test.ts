/**
 * Loading the connection as the `temporal` CLI does (`@temporalio/envconfig`): profiles from the TOML
 * file, the environment on top, certificates read and checked up front, one readable line for every
 * setting that cannot be used. No server needed: `DA_SKIP_TEMPORAL=1 npx jest test/connection/config.test.ts`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  ConnectionConfigError,
  connectionOptions,
  describeConnection,
  loadConnectionConfig,
  mayStartEmbeddedServer,
} from '../../src/client/config';
import { createTestPki, type TestPki } from './certs';

let pki: TestPki;
let file: string;
let home: string;

beforeAll(() => {
  pki = createTestPki();
  home = path.join(pki.dir, 'home');
  file = path.join(pki.dir, 'temporal.toml');
  writeFileSync(
    file,
    [
      '[profile.default]',
      'address = "default.example:7233"',
      'namespace = "from-default"',
      '',
      '[profile.cloud]',
      'address = "my-ns.a1b2c.tmprl.cloud:7233"',
      'namespace = "my-ns.a1b2c"',
      'api_key = "profile-key"',
      '[profile.cloud.grpc_meta]',
      'x-team = "agents"',
      '',
      '[profile.mtls]',
      'address = "temporal.internal:7233"',
      'namespace = "agents"',
      '[profile.mtls.tls]',
      `client_cert_path = "${pki.clientCert}"`,
      `client_key_path = "${pki.clientKey}"`,
      `server_ca_cert_path = "${pki.caCert}"`,
      'server_name = "temporal.test"',
      '',
    ].join('\n'),
  );
});

/** A clean environment: only what the test sets, and a HOME without a config file. */
const load = (env: Record<string, string>, profile?: string) =>
  loadConnectionConfig({ env: { HOME: home, ...env }, ...(profile !== undefined ? { profile } : {}) });

function refusal(env: Record<string, string>, profile?: string): string {
  try {
    load(env, profile);
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectionConfigError);
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a ConnectionConfigError');
}

test('with nothing set: the local default, plaintext, and the embedded server may stand in', () => {
  const config = load({});
  expect(config).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'durable-agent' });
  expect(mayStartEmbeddedServer(config)).toBe(true);
  expect(connectionOptions(config)).toEqual({ address: '127.0.0.1:7233' });
});

test('environment variables as the temporal CLI reads them; empty values mean unset', () => {
  const config = load({
    TEMPORAL_ADDRESS: 'temporal.example:7233',
    TEMPORAL_NAMESPACE: 'agents',
    TEMPORAL_TASK_QUEUE: 'q1',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
    TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    TEMPORAL_GRPC_META_X_TENANT: 'acme',
    TEMPORAL_API_KEY: '',
  });
  expect(config).toMatchObject({ address: 'temporal.example:7233', namespace: 'agents', taskQueue: 'q1' });
  expect(config.apiKey).toBeUndefined();
  expect(config.metadata).toEqual({ 'x-tenant': 'acme' });
  const tls = typeof config.tls === 'object' ? config.tls : undefined;
  expect(Buffer.from(tls?.serverRootCACertificate ?? []).toString()).toBe(readFileSync(pki.caCert, 'utf8'));
  expect(Buffer.from(tls?.clientCertPair?.crt ?? []).toString()).toBe(readFileSync(pki.clientCert, 'utf8'));
  expect(Buffer.from(tls?.clientCertPair?.key ?? []).toString()).toBe(readFileSync(pki.clientKey, 'utf8'));
  expect(tls?.serverNameOverride).toBe('temporal.test');
  expect(mayStartEmbeddedServer({ ...config, address: '127.0.0.1:7233' })).toBe(false);
});

test('an API key turns TLS on (system CAs) unless TEMPORAL_TLS=false, and is never described', () => {
  const cloud = load({ TEMPORAL_ADDRESS: 'x.tmprl.cloud:7233', TEMPORAL_API_KEY: 'secret-key-123' });
  expect(cloud.tls).toBe(true);
  expect(connectionOptions(cloud)).toEqual({ address: 'x.tmprl.cloud:7233', tls: true, apiKey: 'secret-key-123' });
  expect(describeConnection(cloud)).toBe('x.tmprl.cloud:7233 (namespace default, TLS: system CAs, API key)');
  const plain = load({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'FALSE' });
  // Kept as false: the SDKs would otherwise turn TLS on for the API key.
  expect(plain.tls).toBe(false);
  expect(connectionOptions(plain)).toEqual({ address: '127.0.0.1:7233', tls: false, apiKey: 'k' });
  expect(describeConnection(plain)).toBe('127.0.0.1:7233 (namespace default, API key)');
  expect(load({ TEMPORAL_TLS: 'false' }).tls).toBeUndefined();
  expect(mayStartEmbeddedServer(plain)).toBe(false);
  expect(load({ TEMPORAL_TLS: '1' }).tls).toBeTruthy();
  expect(load({ TEMPORAL_TLS: '' }).tls).toBeUndefined();
});

test('profiles: TEMPORAL_PROFILE or the option picks one, default otherwise; the environment wins over the file', () => {
  expect(load({ TEMPORAL_CONFIG_FILE: file })).toMatchObject({
    address: 'default.example:7233',
    namespace: 'from-default',
    profile: 'default',
    configFile: file,
  });
  const cloud = load({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' });
  expect(cloud).toMatchObject({ address: 'my-ns.a1b2c.tmprl.cloud:7233', apiKey: 'profile-key', tls: true });
  expect(cloud.metadata).toEqual({ 'x-team': 'agents' });
  // The option (--profile) wins over TEMPORAL_PROFILE; variables win over the profile's values.
  const mtls = load({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_NAMESPACE: 'override' }, 'mtls');
  expect(mtls).toMatchObject({ address: 'temporal.internal:7233', namespace: 'override', profile: 'mtls' });
  expect(mtls.apiKey).toBeUndefined();
  expect(describeConnection(mtls)).toBe(
    `temporal.internal:7233 (namespace override, TLS: server CA given, client certificate, server name temporal.test, profile 'mtls' of ${file})`,
  );
  // The default file under $HOME/.config/temporalio is read like the CLI reads it.
  const xdg = path.join(pki.dir, 'xdg');
  mkdirSync(path.join(xdg, 'temporalio'), { recursive: true });
  writeFileSync(path.join(xdg, 'temporalio', 'temporal.toml'), readFileSync(file));
  expect(load({ XDG_CONFIG_HOME: xdg }, 'cloud').address).toBe('my-ns.a1b2c.tmprl.cloud:7233');
});

test('a profile that does not exist is named with those that do', () => {
  expect(refusal({ TEMPORAL_CONFIG_FILE: file }, 'prod')).toBe(
    `no profile 'prod' in ${file}; its profiles: default, cloud, mtls`,
  );
  expect(refusal({ TEMPORAL_PROFILE: 'prod' })).toBe(
    `no profile 'prod' in ${path.join(home, '.config', 'temporalio', 'temporal.toml')} (no such file: write it, or point TEMPORAL_CONFIG_FILE at yours)`,
  );
});

test('a config file that cannot be read or parsed is one line naming it', () => {
  expect(refusal({ TEMPORAL_CONFIG_FILE: path.join(pki.dir, 'missing.toml') })).toBe(
    `cannot read the Temporal config file ${path.join(pki.dir, 'missing.toml')} (TEMPORAL_CONFIG_FILE): no such file`,
  );
  const bad = path.join(pki.dir, 'bad.toml');
  writeFileSync(bad, '[profile.default]\naddress = "x:1\nnamespace = 3\n');
  expect(refusal({ TEMPORAL_CONFIG_FILE: bad })).toBe(
    `cannot parse ${bad} as TOML (line 2, column 15): Invalid TOML document: control characters are not allowed in strings`,
  );
  const both = path.join(pki.dir, 'both.toml');
  writeFileSync(both, `[profile.default.tls]\nclient_cert_path = "a"\nclient_cert_data = "b"\n`);
  expect(refusal({ TEMPORAL_CONFIG_FILE: both })).toBe(
    `cannot use the Temporal connection settings in ${both}: Cannot specify both client_cert_path and client_cert_data`,
  );
});

test('certificates are read and checked up front, naming the setting that points at them', () => {
  const missing = path.join(pki.dir, 'nope.pem');
  expect(refusal({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: missing })).toBe(
    `cannot read the TLS certificate file ${missing} (TEMPORAL_TLS_SERVER_CA_CERT_PATH): no such file`,
  );
  expect(refusal({ TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientKey, TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey })).toBe(
    `${pki.clientKey} (TEMPORAL_TLS_CLIENT_CERT_PATH) holds no PEM certificate`,
  );
  expect(refusal({ TEMPORAL_TLS_CLIENT_CERT_DATA: 'garbage', TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey })).toBe(
    'TEMPORAL_TLS_CLIENT_CERT_DATA holds no PEM certificate',
  );
  expect(refusal({ TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert })).toMatch(/^a client certificate needs its key/);
  writeFileSync(path.join(pki.dir, 'bad-profile.toml'), `[profile.p.tls]\nserver_ca_cert_path = "${missing}"\n`);
  expect(refusal({ TEMPORAL_CONFIG_FILE: path.join(pki.dir, 'bad-profile.toml') }, 'p')).toBe(
    `cannot read the TLS certificate file ${missing} (the profile's tls.server_ca_cert_path): no such file`,
  );
  // The data variant is as good as the file.
  const fromData = load({
    TEMPORAL_TLS_CLIENT_CERT_DATA: readFileSync(pki.clientCert, 'utf8'),
    TEMPORAL_TLS_CLIENT_KEY_DATA: readFileSync(pki.clientKey, 'utf8'),
  });
  expect(fromData.tls).toMatchObject({ clientCertPair: expect.anything() });
});

test('booleans are 1/0/true/false, and host verification cannot be turned off', () => {
  expect(refusal({ TEMPORAL_TLS: 'yes' })).toBe("TEMPORAL_TLS must be true, false, 1 or 0, got 'yes'");
  expect(refusal({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'TRUE' })).toMatch(
    /^TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the TypeScript SDK/,
  );
  expect(load({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: '0' }).tls).toBeTruthy();
  expect(refusal({}, '')).toBe('--profile needs a name');
  expect(refusal({ TEMPORAL_ADDRESS: 'temporal.example.com' })).toBe(
    "TEMPORAL_ADDRESS must be host:port (e.g. 127.0.0.1:7233), got 'temporal.example.com'",
  );
  expect(load({ TEMPORAL_ADDRESS: '[::1]:7233' }).address).toBe('[::1]:7233');
});

test('a description never holds a key, a certificate or a metadata value', () => {
  const config = load({
    TEMPORAL_API_KEY: 'sk-very-secret',
    TEMPORAL_GRPC_META_AUTHORIZATION_EXTRA: 'hidden-value',
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
  });
  const text = describeConnection(config);
  expect(text).not.toMatch(/sk-very-secret|hidden-value|BEGIN/);
  expect(text).toContain('gRPC metadata authorization-extra');
});
