/**
 * durable-agent over TLS, mTLS and an API key, configured the way the `temporal` CLI is: a worker
 * and `durable-agent run` (from source, inline or dedicated worker, offline model) complete a run
 * through a TLS endpoint with certificates this test generates (tls-front.ts: TLS terminated in
 * front of the real test server, since Temporal CLI 1.5.1's dev server has no TLS options), and
 * every way of getting it wrong ends with one readable line.
 */
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { benchConnectionFor, connectBenchClient, connectBenchWorker, externalServer } from '../../bench/server';
import { ENCRYPTED_ENCODING } from '../../src/codec';
import type { AgentRunResult } from '../../src/shared';
import { tempWorkspace, testAddress, uniqueQueue } from '../support/temporal';
import { createTestPki, type TestPki } from './certs';
import { ConnectionProcesses, oneLineError, outcome } from './processes';
import { startTlsFront, type TlsFront } from './tls-front';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

jest.setTimeout(180_000);

let pki: TestPki;
let tls: TlsFront;
let mtls: TlsFront;
let keyed: TlsFront;
let configDir: string;

beforeAll(async () => {
  pki = createTestPki();
  tls = await startTlsFront({ upstream: testAddress(), pki });
  mtls = await startTlsFront({ upstream: testAddress(), pki, requireClientCert: true });
  keyed = await startTlsFront({ upstream: testAddress(), pki, apiKey: 'test-api-key-4242' });
  configDir = mkdtempSync(path.join(os.tmpdir(), 'da-config-'));
});

afterAll(async () => {
  processes.killAll();
  await Promise.all([tls?.close(), mtls?.close(), keyed?.close()]);
});

const processes = new ConnectionProcesses(() => ({ XDG_CONFIG_HOME: configDir }));

/** A run of the offline model to completion, its JSON result parsed (and its workflow id). */
async function completedRun(
  args: string[],
  env: Record<string, string>,
): Promise<AgentRunResult & { workflowId: string }> {
  const workspace = await tempWorkspace('tls');
  writeFileSync(path.join(workspace, 'notes.txt'), 'hello over TLS\n');
  const workflowId = `connection-${randomBytes(4).toString('hex')}`;
  const flags = ['--json', '--id', workflowId, '--workspace', workspace];
  const out = await processes.durableAgent(['run', ...flags, ...args, 'list the files here'], env);
  if (out.code !== 0) throw new Error(`run exited ${out.code}\nstdout: ${out.stdout}\nstderr: ${out.stderr}`);
  expect(out.stderr).not.toMatch(/embedded dev server/);
  return { ...(JSON.parse(out.stdout) as AgentRunResult), workflowId };
}

test('TLS from environment variables: run with its inline worker completes through the TLS endpoint, codec on', async () => {
  const before = tls.forwarded();
  const result = await completedRun([], {
    TEMPORAL_ADDRESS: tls.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    TEMPORAL_TASK_QUEUE: uniqueQueue('tls-env'),
    DURABLE_AGENT_CODEC_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  });
  expect(result.exitReason).toBe('completed');
  // The client's calls and the worker's polls all went through TLS.
  expect(tls.forwarded() - before).toBeGreaterThan(5);
  // The CLI's client encrypted the input (and the worker, which completed the run, decrypted it).
  const connection = await Connection.connect({ address: testAddress() });
  try {
    const history = await new Client({ connection }).workflow.getHandle(result.workflowId).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(Buffer.from(input?.metadata?.encoding ?? []).toString()).toBe(ENCRYPTED_ENCODING);
  } finally {
    await connection.close();
  }
});

test('mTLS from a profiles file: a dedicated worker and run --no-inline-worker complete a run', async () => {
  const file = path.join(configDir, 'mtls.toml');
  writeFileSync(
    file,
    [
      '[profile.secure]',
      `address = "${mtls.address}"`,
      '[profile.secure.tls]',
      `server_ca_cert_path = "${pki.caCert}"`,
      `client_cert_path = "${pki.clientCert}"`,
      `client_key_path = "${pki.clientKey}"`,
      '',
    ].join('\n'),
  );
  const taskQueue = uniqueQueue('mtls-profile');
  const worker = await processes.startWorker({
    TEMPORAL_CONFIG_FILE: file,
    DA_TEST_PROFILE: 'secure',
    TEMPORAL_TASK_QUEUE: taskQueue,
  });
  try {
    const before = mtls.forwarded();
    const result = await completedRun(['--no-inline-worker'], {
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'secure',
      TEMPORAL_TASK_QUEUE: taskQueue,
    });
    expect(result.exitReason).toBe('completed');
    expect(mtls.forwarded() - before).toBeGreaterThan(3);
  } finally {
    worker.kill('SIGTERM');
  }
});

test('a server certificate from another CA: run fails with one line naming the connection', async () => {
  const out = await processes.durableAgent(['run', 'hello'], {
    TEMPORAL_ADDRESS: tls.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.otherCaCert,
  });
  expect(out.code).toBe(1);
  expect(oneLineError(out)).toMatch(
    new RegExp(
      `^error: cannot connect to Temporal at ${tls.address} \\(namespace default, TLS: server CA given\\): .*` +
        "unable to verify the first certificate: the server's certificate is not trusted \\(TEMPORAL_TLS_SERVER_CA_CERT_PATH\\)$",
    ),
  );
  expect(out.stdout).not.toMatch(/embedded dev server/);
});

test('mTLS without a client certificate, or with one from another CA: refused, one readable line', async () => {
  const noCert = await processes.durableAgent(['status', 'any-run'], {
    TEMPORAL_ADDRESS: mtls.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
  });
  expect(noCert.code).toBe(1);
  expect(oneLineError(noCert)).toMatch(
    new RegExp(
      `^error: cannot connect to Temporal at ${mtls.address} .*: TLS handshake: tlsv13 alert certificate required: ` +
        'the server requires a client certificate',
    ),
  );
  const stranger = await processes.durableAgent(['status', 'any-run'], {
    TEMPORAL_ADDRESS: mtls.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    TEMPORAL_TLS_CLIENT_CERT_PATH: pki.strangerCert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pki.strangerKey,
  });
  expect(stranger.code).toBe(1);
  expect(oneLineError(stranger)).toMatch(
    /client certificate\): .*TLS handshake: (.*alert (unknown ca|bad certificate)|the server hung up right after the handshake)/,
  );
  expect(mtls.refusedHandshakes.join('\n')).toMatch(/certificate/i);
  // The worker side (the SDK's Rust core) refuses the same way.
  const worker = await outcome(
    processes.spawn('worker-entry.ts', [], {
      TEMPORAL_ADDRESS: mtls.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    }),
  );
  expect(worker.code).toBe(1);
  expect(oneLineError(worker)).toMatch(
    // The core names the alert as `CertificateRequired` or `certificate required`, depending on when it arrives.
    new RegExp(
      `^error: cannot connect to Temporal at ${mtls.address} .*TLS handshake: .*alert.*certificate ?required`,
      'i',
    ),
  );
});

test('an API key goes as authorization: Bearer on every call of client and worker; a wrong one is refused', async () => {
  const first = keyed.authorizations.length;
  const result = await completedRun([], {
    TEMPORAL_ADDRESS: keyed.address,
    TEMPORAL_API_KEY: 'test-api-key-4242',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    TEMPORAL_GRPC_META_X_TEAM: 'agents',
    TEMPORAL_TASK_QUEUE: uniqueQueue('api-key'),
  });
  expect(result.exitReason).toBe('completed');
  const seen = keyed.authorizations.slice(first);
  expect(seen.length).toBeGreaterThan(5);
  expect(new Set(seen)).toEqual(new Set(['Bearer test-api-key-4242']));
  expect(keyed.headerNames.has('x-team')).toBe(true);

  const wrong = await processes.durableAgent(['status', 'any-run'], {
    TEMPORAL_ADDRESS: keyed.address,
    TEMPORAL_API_KEY: 'not-the-key',
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
  });
  expect(wrong.code).toBe(1);
  expect(oneLineError(wrong)).toMatch(
    /^error: cannot connect to Temporal at .*, API key\): Failed to connect to Temporal server: 16 UNAUTHENTICATED: Request unauthorized\.$/,
  );
  expect(wrong.stderr).not.toContain('not-the-key');
});

test('settings that cannot be used: one line and exit code 2 before anything connects', async () => {
  const file = path.join(configDir, 'broken.toml');
  writeFileSync(file, '[profile.default\naddress = "x"\n');
  const profiles = path.join(configDir, 'profiles.toml');
  writeFileSync(profiles, '[profile.a]\naddress = "127.0.0.1:1"\n[profile.b]\naddress = "127.0.0.1:2"\n');
  const cases: [string[], Record<string, string>, RegExp][] = [
    [[], { TEMPORAL_CONFIG_FILE: file }, /^error: cannot parse .*broken\.toml as TOML \(line 1/],
    [[], { TEMPORAL_PROFILE: 'nope' }, /^error: no profile 'nope' in /],
    [
      ['--profile', 'c'],
      { TEMPORAL_CONFIG_FILE: profiles },
      /^error: no profile 'c' in .*profiles\.toml; its profiles: a, b$/,
    ],
    [
      [],
      { TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/nonexistent/ca.pem' },
      /^error: cannot read the TLS certificate file \/nonexistent\/ca\.pem \(TEMPORAL_TLS_SERVER_CA_CERT_PATH\): no such file$/,
    ],
  ];
  for (const [flags, env, expected] of cases) {
    const out = await processes.durableAgent([...flags, 'status', 'any-run'], env);
    expect(oneLineError(out)).toMatch(expected);
    expect(out.code).toBe(2);
  }
});

test('--profile P on the command line wins over TEMPORAL_PROFILE (the status of a run over mTLS)', async () => {
  const file = path.join(configDir, 'flag.toml');
  writeFileSync(
    file,
    [
      '[profile.secure]',
      `address = "${mtls.address}"`,
      '[profile.secure.tls]',
      `server_ca_cert_path = "${pki.caCert}"`,
      `client_cert_path = "${pki.clientCert}"`,
      `client_key_path = "${pki.clientKey}"`,
      '',
    ].join('\n'),
  );
  const before = mtls.forwarded();
  const out = await processes.durableAgent(['status', '--profile', 'secure', 'no-such-run-42'], {
    TEMPORAL_CONFIG_FILE: file,
    TEMPORAL_PROFILE: 'absent',
  });
  expect(oneLineError(out)).toMatch(/^error: no such run: .*no-such-run-42/);
  expect(out.code).toBe(1);
  expect(mtls.forwarded()).toBeGreaterThan(before);
});

test('bench and soak: the server the environment names is reached with its TLS settings', async () => {
  const env = {
    TEMPORAL_ADDRESS: tls.address,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.caCert,
    XDG_CONFIG_HOME: configDir,
  };
  const server = externalServer(env);
  expect(server?.description).toBe(`existing server at ${tls.address} (namespace default, TLS: server CA given)`);
  expect(benchConnectionFor(tls.address, env)).toEqual(server?.connection);
  expect(benchConnectionFor('127.0.0.1:1', env)).toEqual({
    address: '127.0.0.1:1',
    namespace: 'default',
    taskQueue: 'durable-agent',
  });
  expect(externalServer({ XDG_CONFIG_HOME: configDir })).toBeUndefined();
  const before = tls.forwarded();
  const client = await connectBenchClient(server!);
  const worker = await connectBenchWorker(server!);
  try {
    const info = await client.workflowService.describeNamespace({ namespace: 'default' });
    expect(info.namespaceInfo?.name).toBe('default');
    await worker.healthService.check({});
  } finally {
    await client.connection.close();
    await worker.close();
  }
  expect(tls.forwarded() - before).toBeGreaterThanOrEqual(2);
});
