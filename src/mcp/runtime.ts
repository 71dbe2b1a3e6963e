import { hashString } from '../shared/conversation';
import type { McpCallRef, McpServerConfig, McpServerListing, McpSource } from '../shared/mcp';
import { sandboxStatus, type SandboxStatus } from '../sandbox';
import { limitsFromEnv, type SandboxLimits } from '../sandbox/limits';
import { chooseServers, MCP_CONFIG_ENV_VAR, readMcpConfigFile, workspaceConfigFile, type ServerChoice } from './config';
import type { McpConnection } from './connection';
import { resultText } from './content';
import { resolveEndpoint } from './endpoint';
import { withinBudget } from './listing';
import { McpPool, type McpPoolOptions } from './pool';

export interface McpWorkerOptions extends McpPoolOptions {
  /** Servers every run on this worker gets (source `worker`), e.g. the library plugin's `mcpServers`. */
  servers?: Record<string, McpServerConfig>;
  /** A worker-wide configuration file (`{"mcpServers": …}`); default `DURABLE_AGENT_MCP_CONFIG`. */
  configFile?: string;
  /**
   * Take the servers a run names (input `mcpServers`, `--mcp-config`): they run with this worker's
   * rights, so whoever can start a run can start programs on the worker. Default true; false
   * refuses them (the run is told), leaving the worker's own and the workspace's.
   */
  runServers?: boolean;
  /** Read the workspace's `.mcp.json` (its servers are untrusted: sandboxed). Default true. */
  workspaceConfig?: boolean;
  /** The environment operator configurations expand `${VAR}` from; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** How workspace stdio servers are confined; default the bash tool's sandbox status. */
  sandbox?: () => SandboxStatus;
  /**
   * Limits of a workspace stdio server, as of a bash call; default: `DURABLE_AGENT_SANDBOX_MAX_PROCESSES`
   * and the built-in /tmp and /dev/shm sizes.
   */
  limits?: Partial<SandboxLimits>;
}

export interface McpCallContext {
  workspace: string;
  network: boolean;
  toolUseId: string;
  signal: AbortSignal;
  heartbeat(progress?: string): void;
  /** The call's own bound (the activity's timeout); the SDK's default of 60 s would cut slow tools. */
  timeoutMs: number;
}

export interface McpCallResult {
  content: string;
  isError: boolean;
  toolsChanged?: boolean;
}

/**
 * The worker's side of MCP: which servers a run uses (the run's own, the worker's file, the
 * workspace's `.mcp.json`), their tool lists, and durable calls over pooled connections. Nothing
 * a server does throws out of here: a server that fails to start, times out or breaks is an
 * `is_error` result for the model and a message for the operator.
 */
export class McpRuntime {
  readonly pool: McpPool;
  private workerConfig: Promise<{ servers: Record<string, McpServerConfig>; error?: string }> | undefined;

  private readonly limits: SandboxLimits;

  constructor(private readonly options: McpWorkerOptions = {}) {
    this.pool = new McpPool(options);
    // Read at creation, so a bad setting fails the worker's start with a message naming the variable.
    const fromEnv = limitsFromEnv();
    this.limits = {
      maxProcesses: fromEnv.maxProcesses,
      tmpBytes: fromEnv.tmpBytes,
      shmBytes: fromEnv.shmBytes,
      ...options.limits,
    };
  }

  /** Run start: every server the run uses, listed (in parallel), and notes on its configuration. */
  async listForRun(input: {
    runServers?: Record<string, McpServerConfig>;
    workspace: string;
    network: boolean;
  }): Promise<{ servers: McpServerListing[]; notes: string[] }> {
    const notes: string[] = [];
    const worker = await this.workerServers();
    if (worker.error) notes.push(`the worker's MCP configuration is not used: ${worker.error}`);
    const refuseRun = input.runServers !== undefined && this.options.runServers === false;
    if (refuseRun)
      notes.push("this worker does not take a run's own MCP servers (runServers: false); they are not used");
    const sources: { source: McpSource; servers: Record<string, McpServerConfig> }[] = [
      ...(input.runServers && !refuseRun ? [{ source: 'run' as const, servers: input.runServers }] : []),
      { source: 'worker', servers: worker.servers },
    ];
    if (this.options.workspaceConfig !== false) {
      const file = await readMcpConfigFile(workspaceConfigFile(input.workspace));
      if (file.ok === true) sources.push({ source: 'workspace', servers: file.servers });
      else if (file.ok === false) notes.push(`the workspace's .mcp.json is not used: ${file.error}`);
    }
    const chosen = chooseServers(sources, (m) => notes.push(m));
    const servers = await Promise.all(chosen.map((c) => this.listServer(c, input.workspace, input.network)));
    return { servers: withinBudget(servers), notes };
  }

  /** Lists servers again (a change was reported): what the run offers from then on. */
  async listServers(
    servers: { name: string; source: McpSource; config?: McpServerConfig }[],
    workspace: string,
    network: boolean,
  ): Promise<McpServerListing[]> {
    const listed = await Promise.all(
      servers.map(async (s) => {
        const config = await this.configOf(s);
        if (typeof config === 'string') {
          return {
            name: s.name,
            source: s.source,
            transport: 'stdio' as const,
            tools: [],
            toolsHash: '',
            error: config,
          };
        }
        return this.listServer({ name: s.name, source: s.source, config }, workspace, network);
      }),
    );
    return withinBudget(listed);
  }

  /** One call of a server's tool. */
  async call(ref: McpCallRef, args: unknown, ctx: McpCallContext): Promise<McpCallResult> {
    const fail = (message: string) => ({ content: `Error: MCP server '${ref.server}': ${message}`, isError: true });
    let input = args;
    if (typeof input === 'string') {
      try {
        input = JSON.parse(input);
      } catch {
        return fail(`the arguments of ${ref.tool} must be a JSON object`);
      }
    }
    if (input === undefined || input === null) input = {};
    if (typeof input !== 'object' || Array.isArray(input))
      return fail(`the arguments of ${ref.tool} must be a JSON object`);
    const config = await this.configOf({
      name: ref.server,
      source: ref.source,
      ...(ref.config ? { config: ref.config } : {}),
    });
    if (typeof config === 'string') return fail(config);
    const resolved = resolveEndpoint(config, this.endpointContext(ref.source, ctx.workspace, ctx.network));
    if (!resolved.ok) return fail(resolved.error);
    const key = connectionKey(ref.server, resolved.endpoint);
    // A read-only or idempotent call whose connection broke under it runs once more on a new one.
    for (let attempt = 1; ; attempt++) {
      let conn: McpConnection;
      try {
        conn = await this.pool.acquire(key, ref.server, resolved.endpoint);
      } catch (err) {
        return fail(`could not be started or reached: ${(err as Error).message}`);
      }
      conn.inFlight += 1;
      try {
        const result = await conn.callTool(ref.tool, input as Record<string, unknown>, {
          signal: ctx.signal,
          timeout: ctx.timeoutMs,
          onprogress: (p) =>
            ctx.heartbeat(
              `${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`,
            ),
        });
        const text = await resultText(result as Parameters<typeof resultText>[0], {
          workspace: ctx.workspace,
          toolUseId: ctx.toolUseId,
        });
        if (conn.dirty) await conn.listTools(this.pool.connectTimeoutMs).catch(() => undefined);
        return { ...text, ...(conn.hash !== ref.toolsHash ? { toolsChanged: true } : {}) };
      } catch (err) {
        if (ctx.signal.aborted)
          return { content: `Error: the ${ref.tool} call was cancelled before it finished.`, isError: true };
        if (!conn.closed) return fail(`${ref.tool} failed: ${conn.explain(err)}`);
        await this.pool.drop(key, conn);
        if (ref.sideEffect !== 'mutating' && attempt === 1) continue;
        return fail(
          `the server closed the connection during the ${ref.tool} call (${conn.explain(err)}). ` +
            (ref.sideEffect === 'mutating'
              ? 'Its outcome is unknown: check whether it took effect before repeating it.'
              : 'It was retried once on a new connection and failed again.'),
        );
      } finally {
        conn.inFlight -= 1;
        conn.lastUsed = Date.now();
      }
    }
  }

  /** Closes every connection; stdio servers end. */
  close(): Promise<void> {
    return this.pool.closeAll();
  }

  private async listServer(c: ServerChoice, workspace: string, network: boolean): Promise<McpServerListing> {
    const transport = c.config.type === 'http' ? ('http' as const) : ('stdio' as const);
    const base = { name: c.name, source: c.source, transport, ...(c.source !== 'worker' ? { config: c.config } : {}) };
    const resolved = resolveEndpoint(c.config, this.endpointContext(c.source, workspace, network));
    if (!resolved.ok) return { ...base, tools: [], toolsHash: '', error: resolved.error };
    const sandboxed = resolved.sandboxed ? { sandboxed: true } : {};
    try {
      const conn = await this.pool.acquire(connectionKey(c.name, resolved.endpoint), c.name, resolved.endpoint);
      if (conn.dirty) await conn.listTools(this.pool.connectTimeoutMs);
      conn.lastUsed = Date.now();
      return {
        ...base,
        ...sandboxed,
        tools: conn.tools,
        toolsHash: conn.hash,
        ...(conn.warnings.length ? { warnings: conn.warnings.slice(0, 20) } : {}),
      };
    } catch (err) {
      return { ...base, ...sandboxed, tools: [], toolsHash: '', error: (err as Error).message.slice(0, 1000) };
    }
  }

  private endpointContext(source: McpSource, workspace: string, network: boolean) {
    return {
      source,
      workspace,
      network,
      env: this.options.env ?? process.env,
      sandbox: (this.options.sandbox ?? sandboxStatus)(),
      limits: this.limits,
    };
  }

  /** A worker server's configuration is the worker's (never recorded); the others travel with the call. */
  private async configOf(s: {
    name: string;
    source: McpSource;
    config?: McpServerConfig;
  }): Promise<McpServerConfig | string> {
    if (s.source === 'run' && this.options.runServers === false) {
      return "this worker does not take a run's own MCP servers (runServers: false)";
    }
    if (s.source !== 'worker') return s.config ?? 'its configuration is missing from the call';
    const worker = await this.workerServers();
    return worker.servers[s.name] ?? `this worker has no server '${s.name}' in its MCP configuration`;
  }

  private workerServers() {
    this.workerConfig ??= (async () => {
      const servers = { ...(this.options.servers ?? {}) };
      const file = this.options.configFile ?? process.env[MCP_CONFIG_ENV_VAR];
      if (!file) return { servers };
      const read = await readMcpConfigFile(file);
      if (read.ok === true) return { servers: { ...read.servers, ...servers } };
      return { servers, error: read.ok === 'absent' ? `${file} does not exist` : read.error };
    })();
    return this.workerConfig;
  }
}

function connectionKey(server: string, endpoint: unknown): string {
  return `${server}:${hashString(JSON.stringify(endpoint))}`;
}

/** Every runtime this process created, so the worker can end their servers when it stops. */
const runtimes = new Set<McpRuntime>();

export function createMcpRuntime(options: McpWorkerOptions = {}): McpRuntime {
  const runtime = new McpRuntime(options);
  runtimes.add(runtime);
  return runtime;
}

/** Closes every MCP connection of this process (stdio servers end); for a stopping worker. */
export async function closeAllMcpConnections(): Promise<void> {
  await Promise.all([...runtimes].map((r) => r.close()));
}
