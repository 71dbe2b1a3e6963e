import { workerTmpfsBudget, type TmpfsBudget } from '../sandbox/limits';
import { McpConnection, type Endpoint } from './connection';

export interface McpPoolOptions {
  /** A connection unused this long is closed (its stdio process ends). Default 5 minutes. */
  idleTimeoutMs?: number;
  /** Starting a server, initializing and listing its tools. Default 30 s. */
  connectTimeoutMs?: number;
  /**
   * The tmpfs budget sandboxed (workspace) servers take their /tmp and /dev/shm from, shared with
   * bash calls; default: the worker's (`DURABLE_AGENT_SANDBOX_TMPFS_BUDGET`).
   */
  tmpfsBudget?: TmpfsBudget;
}

export const DEFAULT_MCP_IDLE_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;

/**
 * This worker's connections, one per server configuration: one stdio process or HTTP session
 * serves every call of every run that uses the same server, and is closed after an idle timeout.
 * A connection that broke (the process exited, the session ended) is replaced on next use.
 */
export class McpPool {
  readonly idleTimeoutMs: number;
  readonly connectTimeoutMs: number;
  private readonly budget: TmpfsBudget | undefined;
  private readonly connections = new Map<string, Promise<McpConnection>>();
  /** Servers the kernel killed at a sandbox limit: never started again (no respawn loop), with why. */
  private readonly limitKilled = new Map<string, string>();
  private sweeper: NodeJS.Timeout | undefined;
  /** Aborted by `closeAll`: servers still starting are ended, not waited for until their connect timeout. */
  private closing = new AbortController();
  /** Connections opened so far (for tests and the benchmark: no process per call). */
  opened = 0;

  constructor(options: McpPoolOptions = {}) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_MCP_IDLE_TIMEOUT_MS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS;
    this.budget = options.tmpfsBudget;
  }

  /** The live connection for `key`, opened when there is none (concurrent callers share one opening). */
  async acquire(
    key: string,
    server: string,
    endpoint: Endpoint,
    options: { trustAnnotations: boolean },
  ): Promise<McpConnection> {
    const killed = this.limitKilled.get(key);
    if (killed) throw new Error(`${killed} It is not started again on this worker until its configuration changes.`);
    const existing = this.connections.get(key);
    if (existing) {
      const conn = await existing.catch(() => undefined);
      if (conn && !conn.closed) return conn;
      const limit = conn?.limitMessage?.();
      if (limit) {
        this.limitKilled.set(key, limit);
        throw new Error(`${limit} It is not started again on this worker until its configuration changes.`);
      }
      if (this.connections.get(key) === existing) this.connections.delete(key);
    }
    const opening = McpConnection.open(server, endpoint, this.connectTimeoutMs, this.budget ?? workerTmpfsBudget(), {
      ...options,
      signal: this.closing.signal,
    });
    this.connections.set(key, opening);
    opening.then(
      () => {
        this.opened += 1;
      },
      () => {
        // A failed start is not kept: the next call tries again.
        if (this.connections.get(key) === opening) this.connections.delete(key);
      },
    );
    this.startSweeping();
    return opening;
  }

  /** Forgets and closes a connection that broke. */
  async drop(key: string, conn: McpConnection): Promise<void> {
    const limit = conn.limitMessage?.();
    if (limit && this.limitKilled.size < 10_000) this.limitKilled.set(key, limit);
    const current = this.connections.get(key);
    if (current && (await current.catch(() => undefined)) === conn) this.connections.delete(key);
    await conn.close();
  }

  get size(): number {
    return this.connections.size;
  }

  /** Closes every connection (stdio servers end); the worker calls it when it stops. */
  async closeAll(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.closing.abort(new Error('the worker is closing its MCP connections'));
    this.closing = new AbortController();
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close()));
  }

  private startSweeping(): void {
    if (this.sweeper) return;
    const every = Math.max(50, Math.min(30_000, Math.floor(this.idleTimeoutMs / 2)));
    this.sweeper = setInterval(() => void this.sweep(), every);
    this.sweeper.unref();
  }

  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const [key, opening] of [...this.connections]) {
      const conn = await opening.catch(() => undefined);
      if (!conn) continue;
      if (conn.closed || (conn.inFlight === 0 && now - conn.lastUsed >= this.idleTimeoutMs)) {
        if (this.connections.get(key) === opening) this.connections.delete(key);
        await conn.close();
      }
    }
    if (this.connections.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
