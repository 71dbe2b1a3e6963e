/**
 * `durable-agent worker` over mTLS, configured by a profile: it polls through the TLS endpoint and a
 * `run --no-inline-worker` completes on it.
 *
 * Needs src/cli/worker-command.ts to connect with `connectWorker(options.config)` (src/worker/agent-worker.ts)
 * instead of `NativeConnection.connect({ address })`, which drops TLS, the API key and metadata.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tempWorkspace, testAddress, uniqueQueue } from '../support/temporal';
import { createTestPki, type TestPki } from './certs';
import { ConnectionProcesses } from './processes';
import { startTlsFront, type TlsFront } from './tls-front';

jest.setTimeout(180_000);

let pki: TestPki;
let mtls: TlsFront;
const configDir = mkdtempSync(path.join(os.tmpdir(), 'da-config-'));
const processes = new ConnectionProcesses(() => ({ XDG_CONFIG_HOME: configDir }));

beforeAll(async () => {
  pki = createTestPki();
  mtls = await startTlsFront({ upstream: testAddress(), pki, requireClientCert: true });
});

afterAll(async () => {
  processes.killAll();
  await mtls?.close();
});

test('durable-agent worker connects over mTLS from a profile and serves a run', async () => {
  const file = path.join(configDir, 'temporal.toml');
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
  const env = {
    TEMPORAL_CONFIG_FILE: file,
    TEMPORAL_PROFILE: 'secure',
    TEMPORAL_TASK_QUEUE: uniqueQueue('worker-mtls'),
  };
  const worker = processes.spawn('cli-entry.ts', ['worker'], env);
  let output = '';
  worker.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  worker.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 60_000;
  while (!/Worker polling task queue/.test(output)) {
    if (Date.now() > deadline || worker.exitCode !== null) {
      throw new Error(`durable-agent worker did not poll over mTLS; it printed:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const workspace = await tempWorkspace('worker-mtls');
  const id = `worker-mtls-${randomBytes(4).toString('hex')}`;
  const run = await processes.durableAgent(
    ['run', '--json', '--no-inline-worker', '--id', id, '--workspace', workspace, 'list the files here'],
    env,
  );
  expect(run.stderr).not.toMatch(/^error/m);
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ exitReason: 'completed' });
  worker.kill('SIGTERM');
});
