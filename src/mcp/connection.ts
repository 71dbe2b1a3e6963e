import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolEntry } from '../shared/mcp';
import type { TmpfsBudget } from '../sandbox/limits';
import { boundedFetch, MAX_MCP_MESSAGE_BYTES, type JsonRpcId } from './http-fetch';
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
/** How long after a POST's body ended its answer may still be on its way through the SDK's parser. */
const ANSWER_SETTLE_MS = 20;
/** Answered request ids kept until their POST's body ends (a bound against a server answering ids never asked). */
const MAX_ANSWERED_IDS = 10_000;
/** What the SDK's stdio transport says when a message is over its read bound. */
const STDIO_BOUND_ERROR = /ReadBuffer exceeded maximum size/;

/** Why a call failed, when the server (not the tool) is the reason: it went away, or its answer was too large. */
export type ServerFailure = { kind: 'lost' | 'bound'; message: string };

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
  /** HTTP: ids of requests answered, until their POST's body ends (then an unanswered one is failed). */
  private readonly answered = new Set<JsonRpcId>();
  /** HTTP: hands a message to the SDK's protocol as if the server had sent it. */
  private deliver: ((message: unknown) => void) | undefined;
  /** Stdio: the server sent a message over the read bound (the SDK then closed the connection). */
  private overBound = false;
  /** Gives back a sandboxed server's share of the sandbox's resources, once its process is gone. */
  private release: (() => Promise<void>) | undefined;
  /** A sandboxed server the kernel killed at its limit (memory): what to tell; undefined otherwise. */
  limitMessage: (() => string | undefined) | undefined;

  private constructor(
    readonly server: string,
    // Private: the SDK's types (which need the DOM lib) stay out of the package's public declarations.
    private readonly client: Client,
    private readonly transport: Transport,
    /** An operator's server: its tools' annotations give their classes (a workspace server's never do). */
    private readonly trustAnnotations: boolean,
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
    options: { trustAnnotations: boolean; signal?: AbortSignal },
  ): Promise<McpConnection> {
    let release: (() => Promise<void>) | undefined;
    let limitMessage: (() => string | undefined) | undefined;
    let transport: Transport;
    // The HTTP transport's fetch reports to the connection, which is made after it.
    const opened: { conn?: McpConnection } = {};
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
        // The SDK's own bound, named: one message (one line) of at most this many bytes.
        maxBufferSize: MAX_MCP_MESSAGE_BYTES,
      });
    } else {
      transport = new StreamableHTTPClientTransport(new URL(endpoint.url), {
        requestInit: { headers: endpoint.headers },
        fetch: boundedFetch((ids, failure) => opened.conn?.bodyEnded(ids, failure)),
      });
    }
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const conn = new McpConnection(server, client, transport, options.trustAnnotations);
    opened.conn = conn;
    conn.release = release;
    conn.limitMessage = limitMessage;
    if (transport instanceof StreamableHTTPClientTransport) conn.watchAnswers(transport);
    client.onerror = (error: Error) => {
      if (STDIO_BOUND_ERROR.test(error.message)) conn.overBound = true;
    };
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
    let onAbort: (() => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer to initialize and tools/list within ${timeoutMs} ms`)),
        timeoutMs,
      );
      onAbort = () => reject(options.signal?.reason as Error);
      if (options.signal?.aborted) onAbort();
      else options.signal?.addEventListener('abort', onAbort, { once: true });
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
      if (onAbort) options.signal?.removeEventListener('abort', onAbort);
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
    const { tools, warnings } = toolEntries(this.server, raw, this.trustAnnotations);
    this.tools = tools;
    this.warnings = warnings;
    this.hash = toolsHash(tools);
  }

  /**
   * Why a call failed when the server is the reason: its answer was over a read bound (not worth
   * another try), or the server went away before answering (the connection closed, or an HTTP
   * answer's stream ended without it). Undefined for a tool's own error.
   */
  serverFailure(err: unknown): ServerFailure | undefined {
    if (this.overBound) {
      return {
        kind: 'bound',
        message:
          `the server sent a message over ${MAX_MCP_MESSAGE_BYTES / 1024 / 1024} MiB, the limit of one MCP message ` +
          '(an image or file over about 7.5 MB, base64 in one message, is over it)',
      };
    }
    const data = err instanceof McpError ? (err.data as { durableAgent?: unknown } | undefined) : undefined;
    // Ours (bodyEnded): the SDK's "MCP error -32000: " says nothing more.
    const ours =
      data?.durableAgent !== undefined ? (err as Error).message.replace(/^MCP error -?\d+: /, '') : undefined;
    if (data?.durableAgent === 'bound') return { kind: 'bound', message: ours ?? '' };
    if (data?.durableAgent === 'lost' || this.closed) return { kind: 'lost', message: this.explain(ours ?? err) };
    return undefined;
  }

  /** HTTP: notes every answer the SDK receives, and keeps the protocol's handler to fail a request whose stream ended. */
  private watchAnswers(transport: StreamableHTTPClientTransport): void {
    let handler: Transport['onmessage'];
    Object.defineProperty(transport, 'onmessage', {
      configurable: true,
      get: () =>
        handler &&
        ((message: Parameters<NonNullable<Transport['onmessage']>>[0], extra?: unknown) => {
          const m = message as { id?: unknown; method?: unknown };
          if ((typeof m.id === 'string' || typeof m.id === 'number') && m.method === undefined) {
            if (this.answered.size >= MAX_ANSWERED_IDS) this.answered.clear();
            this.answered.add(m.id);
          }
          (handler as (m: unknown, e?: unknown) => void)(message, extra);
        }),
      set: (h: Transport['onmessage']) => {
        handler = h;
      },
    });
    this.deliver = (message) => (transport.onmessage as ((m: unknown) => void) | undefined)?.(message);
  }

  /**
   * HTTP: a POST's body ended. A request it carried that has no answer by then never will: it is
   * failed now (an error answer handed to the SDK) instead of waiting for its timeout.
   */
  private bodyEnded(ids: readonly JsonRpcId[], failure: { message: string; bound: boolean } | undefined): void {
    setTimeout(() => {
      for (const id of ids) {
        if (this.answered.delete(id)) continue;
        const message = failure?.message ?? 'the server closed its answer stream before answering';
        this.deliver?.({
          jsonrpc: '2.0',
          id,
          error: {
            code: ErrorCode.ConnectionClosed,
            message,
            data: { durableAgent: failure?.bound ? 'bound' : 'lost' },
          },
        });
      }
    }, ANSWER_SETTLE_MS).unref();
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
