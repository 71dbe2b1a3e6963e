import * as path from 'node:path';
import { hashString } from '../shared/conversation';
import type { McpCallRef, McpServerConfig, McpServerListing, McpSource } from '../shared/mcp';
import { sandboxStatus, type SandboxStatus } from '../sandbox';
import { limitsFromEnv, type SandboxLimits } from '../sandbox/limits';
import { rootsFromEnv } from '../tools/workspace-roots';
import { chooseServers, MCP_CONFIG_ENV_VAR, readMcpConfigFile, workspaceConfigFile, type ServerChoice } from './config';
import type { McpConnection } from './connection';
import { resultText } from './content';
import { resolveEndpoint } from './endpoint';
import { PrivateDirectory } from './operator-launch';
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
  /**
   * Where runs' workspaces may be: no operator server starts in, or resolves a program or module
   * from, a directory inside them. Default: as the worker's (`DURABLE_AGENT_WORKSPACE_ROOTS`, else
   * the working directory).
   */
  workspaceRoots?: readonly string[];
}

/** Sandboxed servers that cannot start are told why a path they name may be missing. */
const SANDBOX_HINT =
  ' (this workspace server runs in the bash sandbox, which shows it only the system directories and the ' +
  "workspace: a program, interpreter or file elsewhere on the worker is not there; a path in the sandbox's " +
  'messages may be the workspace as mounted inside it)';

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
  private workerConfig: Promise<WorkerServers> | undefined;

  private readonly limits: SandboxLimits;
  private readonly roots: readonly string[];
  /** The working directory of operator servers whose own would be one a run can write. */
  private readonly privateDir = new PrivateDirectory();

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
    this.roots = [...(options.workspaceRoots ?? rootsFromEnv() ?? [process.cwd()])].map((r) => path.resolve(r));
  }

  /** Run start: every server the run uses, listed (in parallel), and notes on its configuration. */
  async listForRun(input: {
    runServers?: Record<string, McpServerConfig>;
    workspace: string;
    network: boolean;
    /** Run start's cancellation: listing stops waiting at once (servers still starting go on in the pool). */
    signal?: AbortSignal;
  }): Promise<{ servers: McpServerListing[]; notes: string[] }> {
    const notes: string[] = [];
    const worker = await this.workerServers();
    if (worker.error) notes.push(`the worker's MCP configuration is not used: ${worker.error}`);
    notes.push(...worker.warnings);
    const refuseRun = input.runServers !== undefined && this.options.runServers === false;
    if (refuseRun)
      notes.push("this worker does not take a run's own MCP servers (runServers: false); they are not used");
    const sources: { source: McpSource; servers: Record<string, McpServerConfig> }[] = [
      ...(input.runServers && !refuseRun ? [{ source: 'run' as const, servers: input.runServers }] : []),
      { source: 'worker', servers: worker.servers },
    ];
    if (this.options.workspaceConfig !== false) {
      const file = await readMcpConfigFile(workspaceConfigFile(input.workspace));
      if (file.ok === true) {
        sources.push({ source: 'workspace', servers: file.servers });
        notes.push(...(file.warnings ?? []).map((w) => w.replace(/^[^:]*: /, "the workspace's .mcp.json: ")));
      } else if (file.ok === false) notes.push(`the workspace's .mcp.json is not used: ${file.error}`);
    }
    const chosen = chooseServers(sources, (m) => notes.push(m));
    const servers = await untilAborted(
      Promise.all(
        chosen.map((c) =>
          this.listServer(
            c,
            c.source === 'worker' ? ownValue(worker.dirs, c.name) : undefined,
            input.workspace,
            input.network,
            input.signal,
          ),
        ),
      ),
      input.signal,
    );
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
        const found = await this.configOf(s);
        if (typeof found === 'string') {
          return {
            name: s.name,
            source: s.source,
            transport: 'stdio' as const,
            tools: [],
            toolsHash: '',
            error: found,
          };
        }
        return this.listServer({ name: s.name, source: s.source, config: found.config }, found.dir, workspace, network);
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
    const found = await this.configOf({
      name: ref.server,
      source: ref.source,
      ...(ref.config ? { config: ref.config } : {}),
    });
    if (typeof found === 'string') return fail(found);
    const resolved = resolveEndpoint(
      found.config,
      this.endpointContext(ref.source, found.dir, ctx.workspace, ctx.network),
    );
    if (!resolved.ok) return fail(resolved.error);
    const trust = { trustAnnotations: ref.source !== 'workspace' };
    const key = connectionKey(ref.server, ref.source, resolved.endpoint);
    // A read-only or idempotent call whose connection broke under it runs once more on a new one.
    for (let attempt = 1; ; attempt++) {
      let conn: McpConnection;
      try {
        conn = await this.pool.acquire(key, ref.server, resolved.endpoint, trust);
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
        const failure = conn.serverFailure(err);
        if (!failure) return fail(`${ref.tool} failed: ${conn.explain(err)}`);
        await this.pool.drop(key, conn);
        if (failure.kind === 'bound') {
          // The same answer would come again: no second try.
          return fail(`the answer to the ${ref.tool} call could not be received: ${failure.message}.`);
        }
        if (ref.sideEffect !== 'mutating' && attempt === 1) continue;
        return fail(
          `the server closed the connection during the ${ref.tool} call (${failure.message}). ` +
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
  async close(): Promise<void> {
    await this.pool.closeAll();
    this.privateDir.remove();
  }

  private async listServer(
    c: ServerChoice,
    dir: string | undefined,
    workspace: string,
    network: boolean,
    signal?: AbortSignal,
  ): Promise<McpServerListing> {
    const transport = c.config.type === 'http' ? ('http' as const) : ('stdio' as const);
    const base = { name: c.name, source: c.source, transport, ...(c.source !== 'worker' ? { config: c.config } : {}) };
    const resolved = resolveEndpoint(c.config, this.endpointContext(c.source, dir, workspace, network));
    if (!resolved.ok) return { ...base, tools: [], toolsHash: '', error: resolved.error };
    const sandboxed = resolved.sandboxed ? { sandboxed: true } : {};
    try {
      const conn = await untilAborted(
        this.pool.acquire(connectionKey(c.name, c.source, resolved.endpoint), c.name, resolved.endpoint, {
          trustAnnotations: c.source !== 'workspace',
        }),
        signal,
      );
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
      if (signal?.aborted) throw err;
      const error = (err as Error).message.slice(0, 1000) + (resolved.sandboxed ? SANDBOX_HINT : '');
      return { ...base, ...sandboxed, tools: [], toolsHash: '', error };
    }
  }

  /** `dir`: the directory of the worker's configuration file, for its servers. */
  private endpointContext(source: McpSource, dir: string | undefined, workspace: string, network: boolean) {
    return {
      source,
      workspace,
      network,
      env: this.options.env ?? process.env,
      sandbox: (this.options.sandbox ?? sandboxStatus)(),
      limits: this.limits,
      unsafeDirs: [...this.roots, workspace],
      operatorDir: dir ?? process.cwd(),
      privateDir: () => this.privateDir.path,
    };
  }

  /**
   * A worker server's configuration is the worker's (never recorded); the others travel with the
   * call. `dir`: the directory of the worker's file, for a server from it.
   */
  private async configOf(s: {
    name: string;
    source: McpSource;
    config?: McpServerConfig;
  }): Promise<{ config: McpServerConfig; dir?: string } | string> {
    if (s.source === 'run' && this.options.runServers === false) {
      return "this worker does not take a run's own MCP servers (runServers: false)";
    }
    if (s.source !== 'worker') return s.config ? { config: s.config } : 'its configuration is missing from the call';
    const worker = await this.workerServers();
    const config = ownValue(worker.servers, s.name);
    if (!config) return `this worker has no server '${s.name}' in its MCP configuration`;
    const dir = ownValue(worker.dirs, s.name);
    return { config, ...(dir ? { dir } : {}) };
  }

  private workerServers(): Promise<WorkerServers> {
    this.workerConfig ??= (async () => {
      const servers = { ...(this.options.servers ?? {}) };
      const file = this.options.configFile ?? process.env[MCP_CONFIG_ENV_VAR];
      if (!file) return { servers, dirs: {}, warnings: [] };
      const read = await readMcpConfigFile(file);
      if (read.ok === true) {
        // A relative command or path of the file's servers means one beside the file (the operator's).
        const dir = path.dirname(path.resolve(file));
        const dirs = Object.fromEntries(Object.keys(read.servers).map((name) => [name, dir]));
        for (const name of Object.keys(servers)) delete dirs[name];
        return { servers: { ...read.servers, ...servers }, dirs, warnings: read.warnings ?? [] };
      }
      return {
        servers,
        dirs: {},
        warnings: [],
        error: read.ok === 'absent' ? `${file} does not exist` : read.error,
      };
    })();
    return this.workerConfig;
  }
}

interface WorkerServers {
  servers: Record<string, McpServerConfig>;
  /** The directory of the worker's file, by server name, for the servers that come from it. */
  dirs: Record<string, string>;
  warnings: string[];
  error?: string;
}

/** `map[key]` when `map` has it as its own (a name such as `constructor` is not looked up in Object's prototype). */
function ownValue<T>(map: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** A workspace server never shares a connection with an operator's: their tools' classes differ. */
function connectionKey(server: string, source: McpSource, endpoint: unknown): string {
  return `${source === 'workspace' ? 'workspace' : 'operator'}:${server}:${hashString(JSON.stringify(endpoint))}`;
}

/** `work`, or a rejection as soon as `signal` aborts (with its reason): what is still running goes on unwatched. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
      (error: unknown) => (signal.removeEventListener('abort', onAbort), reject(error as Error)),
    );
  });
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
