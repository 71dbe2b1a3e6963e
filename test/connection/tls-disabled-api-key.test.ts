import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectionOptions, loadConnectionConfig } from '../../src/client/config';
import { temporalCliPath } from '../clients/temporal-cli-helpers';
import { quietRuntime, testAddress } from '../support/temporal';

/**
 * TLS turned off explicitly (`TEMPORAL_TLS=false`, or a profile's `tls.disabled = true`) together
 * with an API key: the `temporal` CLI connects in plaintext and sends the key. durable-agent kept
 * TLS on (the SDKs turn it on for an API key unless told `false`) and never connected. Both now
 * connect to the (plaintext) test server with the same settings.
 */
const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-tls-off-'));
const file = path.join(dir, 'temporal.toml');
beforeAll(() => {
  quietRuntime();
  writeFileSync(
    file,
    [
      '[profile.plain]',
      `address = "${testAddress()}"`,
      'api_key = "profile-key"',
      '[profile.plain.tls]',
      'disabled = true',
      '',
    ].join('\n'),
  );
});

const settings: Array<[string, NodeJS.ProcessEnv]> = [
  ['TEMPORAL_TLS=false', { TEMPORAL_ADDRESS: testAddress(), TEMPORAL_API_KEY: 'env-key', TEMPORAL_TLS: 'false' }],
  ["a profile's tls.disabled = true", { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'plain' }],
];

/** `temporal workflow list` with only these settings (no flags), exit code and stderr. */
function temporalCli(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(temporalCliPath(), ['workflow', 'list', '--limit', '1'], {
    env: { PATH: process.env.PATH, HOME: dir, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
}

test.each(settings)(
  'with %s and an API key, the temporal CLI, the client and the worker all connect in plaintext',
  async (_name, env) => {
    expect(await temporalCli(env)).toEqual({ code: 0, stderr: '' });

    const config = loadConnectionConfig({ env: { HOME: dir, ...env } });
    expect(config.apiKey).toBeDefined();
    expect(config.tls).toBe(false);
    const client = await Connection.connect({ ...connectionOptions(config), connectTimeout: 5000 });
    try {
      await client.workflowService.getSystemInfo({});
    } finally {
      await client.close();
    }
    const worker = await NativeConnection.connect(connectionOptions(config));
    await worker.close();
  },
  30_000,
);
