/**
 * A Temporal dev server of a test's own (not the suite's shared one), with SQLite persistence so
 * it can be stopped and started again on the same port and keep its runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { devServerArgs, freePort, waitUntilReachable } from '../../src/server/dev-server';

export class OwnDevServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly address: string,
    readonly dir: string,
    private readonly cli: string,
  ) {}

  /** Starts a headless dev server on a free port with a fresh SQLite database. */
  static async start(): Promise<OwnDevServer> {
    const cli = process.env.DA_TEST_TEMPORAL_CLI;
    if (!cli) throw new Error('No Temporal CLI: run the suite with `npm test` (jest global setup finds it).');
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-own-server-'));
    const server = new OwnDevServer(`127.0.0.1:${await freePort()}`, dir, cli);
    await server.up();
    return server;
  }

  get dbFile(): string {
    return path.join(this.dir, 'temporal.db');
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts (again) on the same port and database; resolves once it accepts connections. */
  async up(): Promise<void> {
    const log = openSync(path.join(this.dir, 'server.log'), 'a');
    const child = spawn(this.cli, devServerArgs({ address: this.address, dbFile: this.dbFile, headless: true }), {
      stdio: ['ignore', log, log],
    });
    this.child = child;
    await waitUntilReachable(this.address, 60_000, child);
  }

  /** Stops it (SIGTERM, then SIGKILL after 10 s) and waits for the process to exit. */
  async down(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(force);
  }

  async close(): Promise<void> {
    await this.down();
    await fs.rm(this.dir, { recursive: true, force: true });
  }
}
