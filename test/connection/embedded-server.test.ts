/**
 * The embedded-server rule: `durable-agent run` starts the embedded dev server only when the
 * address is on loopback, nothing listens there, and neither TLS nor an API key is configured. A
 * configured server that does not answer is an error, not a plaintext stand-in.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_UI_PORT, freePort, isReachable } from '../../src/server/dev-server';
import { tempWorkspace } from '../support/temporal';
import { ConnectionProcesses, oneLineError } from './processes';

jest.setTimeout(180_000);

const dataHome = mkdtempSync(path.join(os.tmpdir(), 'da-embedded-'));
const configHome = mkdtempSync(path.join(os.tmpdir(), 'da-config-'));
const processes = new ConnectionProcesses(() => ({ XDG_DATA_HOME: dataHome, XDG_CONFIG_HOME: configHome }));

afterAll(() => {
  processes.killAll();
  // The embedded server outlives the CLI on purpose (the next command reuses it): stop ours.
  const pidFile = path.join(dataHome, 'durable-agent', 'temporal-server.pid');
  if (existsSync(pidFile)) {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM');
    } catch {
      // already gone
    }
  }
});

const UI_PORT_OFFSET = DEFAULT_UI_PORT - 7233;

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

test('loopback, nothing listening, no TLS or API key: run starts the embedded server and completes', async () => {
  // The embedded server's Web UI takes its port + 1000: both free, whatever this machine runs on
  // 7233/8233 (an embedded server `npm start` left running).
  let port = await freePort();
  while (port + UI_PORT_OFFSET > 65535 || !(await portIsFree(port + UI_PORT_OFFSET))) port = await freePort();
  const address = `127.0.0.1:${port}`;
  const workspace = await tempWorkspace('embedded');
  const out = await processes.durableAgent(['run', '--json', '--workspace', workspace, 'list the files here'], {
    TEMPORAL_ADDRESS: address,
  });
  expect(out.stderr).toContain(`No Temporal server at ${address}: starting the embedded dev server in the background`);
  expect(out.code).toBe(0);
  expect(JSON.parse(out.stdout)).toMatchObject({ exitReason: 'completed' });
  expect(await isReachable(address)).toBe(true);
});

test('a configured server that does not answer (TLS, API key, another host) is an error, not the embedded server', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const cases: [Record<string, string>, string][] = [
    [{ TEMPORAL_ADDRESS: address, TEMPORAL_TLS: 'true' }, `${address} (namespace default, TLS: system CAs)`],
    [{ TEMPORAL_ADDRESS: address, TEMPORAL_API_KEY: 'k' }, `${address} (namespace default, TLS: system CAs, API key)`],
    [{ TEMPORAL_ADDRESS: '192.0.2.1:7233' }, '192.0.2.1:7233 (namespace default)'],
  ];
  for (const [env, described] of cases) {
    const out = await processes.durableAgent(['run', 'hello'], env);
    expect(out.code).toBe(1);
    expect(oneLineError(out)).toBe(
      `error: No Temporal server answers at ${described}. Check TEMPORAL_ADDRESS or the profile; the embedded ` +
        'dev server stands in only for a loopback address without TLS or an API key.',
    );
    expect(out.stdout + out.stderr).not.toContain('starting the embedded dev server');
  }
  expect(await isReachable(address)).toBe(false);
});
