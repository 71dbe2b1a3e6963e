import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolEntry } from '../shared/mcp';
import type { TmpfsBudget } from '../sandbox/limits';
import { toolEntries, toolsHash, type RawTool } from './listing';
import { launchSandboxed, type SandboxedServer } from './sandboxed-launch';
import { PACKAGE_VERSION } from '../version';

/**
 * How a server is reached, resolved from its configuration (variables expanded, sandbox applied).
 * A stdio server with `sandbox` runs in the bash sandbox: `command`, `args` and `env` are then
 * what runs inside it, and `cwd` is the workspace.
 */
export type Endpoint =
  | {
      transport: 'stdio';
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      sandbox?: SandboxedServer;
    }
  | { transport: 'http'; url: string; headers: Record<string, string> };

/** Pages of `tools/list` read at most; a server paging without end is cut here. */
const MAX_LIST_PAGES = 20;
/** Characters of a stdio server's stderr kept for the operator's messages. */
const STDERR_TAIL_CHARS = 2000;
const CLIENT_INFO = { name: 'durable-agent', version: PACKAGE_VERSION };

/**
 * One live session with one server: a stdio process or a Streamable HTTP session, initialized,
 * with its tool list. Many calls share it. It notes `notifications/tools/list_changed` (the list is
 * read again before the next call reports) and its own end (the pool then opens a new one).
 */
export class McpConnection {
  tools: McpToolEntry[] = [];
  warnings: string[] = [];
  hash = '';
  /** The server said its tool list changed; not yet read again. */
  dirty = false;
  closed = false;
  inFlight = 0;
  lastUsed = Date.now();
  private stderrTail = '';
  /** Gives back a sandboxed server's share of the sandbox's resources, once its process is gone. */
  private release: (() => Promise<void>) | undefined;
  /** A sandboxed server the kernel killed at its limit (memory): what to tell; undefined otherwise. */
  limitMessage: (() => string | undefined) | undefined;

  private constructor(
    readonly server: string,
    // Private: the SDK's types (which need the DOM lib) stay out of the package's public declarations.
    private readonly client: Client,
    private readonly transport: Transport,
  ) {}

  /** `tools/call` over this session (the SDK's `callTool`); plain types keep the SDK's out of declarations. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: {
      signal: AbortSignal;
      timeout?: number;
      onprogress: (p: { progress: number; total?: number; message?: string }) => void;
    },
  ): Promise<unknown> {
    return this.client.callTool({ name, arguments: args }, undefined, { ...options, resetTimeoutOnProgress: true });
  }

  /**
   * Starts (or reaches) the server, initializes and lists its tools, within `timeoutMs`. A
   * sandboxed server first reserves its share of `budget`, held until the connection closes.
   */
  static async open(
    server: string,
    endpoint: Endpoint,
    timeoutMs: number,
    budget: TmpfsBudget,
  ): Promise<McpConnection> {
    let release: (() => Promise<void>) | undefined;
    let limitMessage: (() => string | undefined) | undefined;
    let transport: Transport;
    if (endpoint.transport === 'stdio') {
      let { command, args, env } = endpoint;
      if (endpoint.sandbox) {
        const workspace = endpoint.cwd ?? process.cwd();
        const launch = await launchSandboxed({ command, args, env, workspace }, endpoint.sandbox, budget, timeoutMs);
        ({ command, args, env } = launch);
        release = () => launch.release();
        limitMessage = () => launch.limitMessage();
      }
      transport = new StdioClientTransport({
        command,
        args,
        env,
        // A sandboxed server reaches its workspace through the descriptor its launcher reopens, not the path.
        ...(endpoint.cwd && !endpoint.sandbox ? { cwd: endpoint.cwd } : {}),
        stderr: 'pipe',
      });
    } else {
      transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
        requestInit: { headers: endpoint.headers },
      });
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const conn = new McpConnection(server, client, transport);
    conn.release = release;
    conn.limitMessage = limitMessage;
    if (transport instanceof StdioClientTransport) {
      transport.stderr?.on('data', (chunk: Buffer) => {
        conn.stderrTail = (conn.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
    }
    client.onclose = () => {
      conn.closed = true;
      void conn.releaseOnce();
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      conn.dirty = true;
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer to initialize and tools/list within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([
        (async () => {
          await client.connect(transport, { timeout: timeoutMs });
          await conn.listTools(timeoutMs);
        })(),
        timeout,
      ]);
    } catch (err) {
      await conn.close();
      throw new Error(conn.explain(err));
    } finally {
      clearTimeout(timer);
    }
    return conn;
  }

  /** Reads the tool list (all pages) and recomputes what the run would offer. */
  async listTools(timeoutMs: number): Promise<void> {
    this.dirty = false;
    const raw: RawTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.client.listTools(cursor ? { cursor } : {}, { timeout: timeoutMs });
      raw.push(...(Array.isArray(result.tools) ? (result.tools as RawTool[]) : []));
      cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined;
      if (!cursor) break;
    }
    const { tools, warnings } = toolEntries(this.server, raw);
    this.tools = tools;
    this.warnings = warnings;
    this.hash = toolsHash(tools);
  }

  /** A failure's text for the model and the operator: the error, and what the server printed last. */
  explain(err: unknown): string {
    const limit = this.limitMessage?.();
    const message = `${limit ? `${limit} ` : ''}${err instanceof Error ? err.message : String(err)}`;
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return tail ? `${message} (server stderr: ${tail.slice(-500)})` : message;
  }

  async close(): Promise<void> {
    this.closed = true;
    try {
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId) {
        await this.transport.terminateSession().catch(() => undefined);
      }
      await this.client.close();
    } catch {
      // Closing a connection that already broke has nothing left to do.
    }
    await this.releaseOnce();
  }

  private async releaseOnce(): Promise<void> {
    const release = this.release;
    this.release = undefined;
    await release?.();
  }
}
