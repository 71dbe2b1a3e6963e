import { Client, Connection, type TLSConfig } from '@temporalio/client';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { ensureSearchAttributes } from '../../src/server/search-attributes';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/shared/search-attributes';
import type { ServerBinaries } from './binaries';

/** The Temporal server of the test cluster as a process, and the waits until it serves. */
/** One `temporal-server` process at a time, started with the checked-in config and this environment. */
export class ServerProcess {
  private child: ChildProcess | undefined;

  constructor(
    private readonly binaries: ServerBinaries,
    private readonly serverArgs: (root: string) => string[],
    private readonly root: string,
    private readonly env: Record<string, string>,
    private readonly logFile: string,
  ) {}

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  exitDescription(): string | undefined {
    const child = this.child;
    if (!child || this.running) return undefined;
    return `the Temporal server exited (${child.exitCode ?? child.signalCode})`;
  }

  async up(): Promise<void> {
    const fd = openSync(this.logFile, 'a');
    // Only what the config reads: no TEMPORAL_* of the caller (TEMPORAL_ROOT, TEMPORAL_ENVIRONMENT… are the server's flags).
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...this.env };
    const args = this.serverArgs(this.root);
    this.child = spawn(this.binaries.server, args, { cwd: this.root, env, stdio: ['ignore', fd, fd] });
    closeSync(fd);
  }

  async down(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(force);
  }
}

export async function waitForFrontend(
  options: { address: string; tls: TLSConfig },
  server: ServerProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const exited = server.exitDescription();
    if (exited) throw new Error(exited);
    try {
      const connection = await Connection.connect({ ...options, connectTimeout: 2000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the Temporal server did not answer within ${timeoutMs / 1000} s (last error: ${last})`);
}

/**
 * Until a run can start with durable-agent's search attributes set: the namespace and the
 * attributes have reached the frontend and history services (their caches refresh every 2 s).
 */
export async function waitForNamespace(
  options: { address: string; tls: TLSConfig },
  namespace: string,
  timeoutMs: number,
): Promise<void> {
  const connection = await Connection.connect(options);
  try {
    const added = await ensureSearchAttributes(connection.operatorService, namespace);
    if (added.length) throw new Error(`setup-namespace.sh did not register ${added.join(', ')}`);
    const client = new Client({ connection, namespace: namespace });
    const values: Record<string, unknown> = { Keyword: 'probe', Int: 0, Double: 0 };
    const searchAttributes = Object.fromEntries(
      SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => [d.name, [values[d.cliType] ?? 'probe']]),
    );
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const handle = await client.workflow.start('cluster-probe', {
          taskQueue: 'cluster-probe',
          workflowId: `cluster-probe-${Date.now()}-${attempt}`,
          // eslint-disable-next-line @typescript-eslint/no-explicit-any
          searchAttributes: searchAttributes as any,
        });
        await handle.terminate('cluster probe');
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the namespace is not usable: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  } finally {
    await connection.close();
  }
}
