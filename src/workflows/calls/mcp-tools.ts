import { proxyActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { failureMessage, stopping } from './failures';
import { hashString } from '../../shared/conversation';
import type { ToolSpec } from '../../shared/messages';
import type { RunEventInput } from '../../shared/run';
import { agentActivities } from './activity-proxy';
import {
  describeMcpServer,
  isMcpToolName,
  mcpServerKey,
  type McpCallRef,
  type McpServerListing,
  type McpSideEffect,
  type McpSource,
  type McpServerConfig,
} from '../../shared/mcp';

/** How a run's MCP server is carried across continue-as-new (in its context's sources). */
interface CarriedServer {
  kind: 'mcp_server';
  name: string;
  source: McpSource;
  transport?: 'stdio' | 'http';
  config?: McpServerConfig;
  toolsHash: string;
  tools: number;
}

/**
 * The run's MCP tools (docs/mcp.md), as recorded: listed once at run start (inside `prepareRun`),
 * offered to the model as `mcp__<server>__<tool>`, and changed only at one point — after a turn's
 * tool calls, before the next model call — when a call reported that its server's list is no
 * longer the one the run offers (`notifications/tools/list_changed`, a reconnect). A new execution
 * after continue-as-new lists its servers again. Every change is reported as a notice.
 */
export class McpTools {
  private servers: McpServerListing[] = [];
  private readonly byName = new Map<string, { server: McpServerListing; tool: McpServerListing['tools'][number] }>();
  private readonly changed = new Set<string>();
  private specsCache: ToolSpec[] = [];
  private hashCache: string | undefined;
  private readonly activities: ActivityInterfaceFor<Pick<Activities, 'listMcpTools'>>;
  /** The run context's sources, where the servers are carried across continue-as-new. */
  private carriedIn: unknown[] | undefined;

  constructor(
    /**
     * `only`: the MCP entries of the run's `tools` (`mcp__<server>__<tool>`, or `mcp__<server>` for all of a
     * server's tools); when there are any, the run offers those MCP tools and no others.
     */
    private readonly run: { workspace?: string; network: boolean; only?: readonly string[] },
    private readonly emit: (event: RunEventInput) => void,
    /** Told the new definitions (the model calls send them). */
    private readonly onChange: (specs: ToolSpec[], hash: string | undefined) => void = () => {},
  ) {
    this.activities = agentActivities(
      proxyActivities<Activities>({
        startToCloseTimeout: '2 minutes',
        retry: { initialInterval: '1 second', maximumAttempts: 2 },
      }),
    );
  }

  get active(): boolean {
    return this.servers.length > 0;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  sideEffect(name: string): McpSideEffect | undefined {
    return this.byName.get(name)?.tool.sideEffect;
  }

  /** What a call of this tool carries to the worker. */
  callRef(name: string): McpCallRef | undefined {
    const found = this.byName.get(name);
    if (!found) return undefined;
    const { server, tool } = found;
    return {
      server: server.name,
      tool: tool.tool,
      source: server.source,
      ...(server.config ? { config: server.config } : {}),
      sideEffect: tool.sideEffect,
      toolsHash: server.toolsHash,
    };
  }

  /** Why a call of an `mcp__` name that the run does not offer is refused. */
  unknownMessage(name: string): string | undefined {
    if (!isMcpToolName(name) || this.byName.has(name)) return undefined;
    const server = this.servers.find((s) => mcpServerKey(name) === `mcp__${s.name}`);
    if (!server) return `Error: Tool '${name}' not found: this run has no MCP server by that name.`;
    if (server.error) return `Error: Tool '${name}' is unavailable: MCP server '${server.name}' ${server.error}`;
    return `Error: Tool '${name}' not found: MCP server '${server.name}' does not offer it (any more).`;
  }

  get specs(): ToolSpec[] {
    return this.specsCache;
  }

  /** The names the run offers now (`mcp__<server>__<tool>`): what a text protocol call may name. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Run start: the listing `prepareRun` recorded, reported server by server. */
  start(listing: { servers: McpServerListing[]; notes: string[] } | undefined): void {
    if (!listing) return;
    for (const note of listing.notes.slice(0, 20)) this.emit({ kind: 'notice', message: `mcp: ${note}` });
    this.use(listing.servers);
    for (const s of this.servers) this.emit({ kind: 'notice', message: `mcp: ${describeMcpServer(s)}` });
    for (const w of this.servers.flatMap((s) => s.warnings ?? []).slice(0, 20))
      this.emit({ kind: 'notice', message: `mcp: ${w}` });
  }

  /** A new execution after continue-as-new: the carried servers, listed again. */
  async resume(sources: readonly unknown[]): Promise<void> {
    const carried = sources.filter((s): s is CarriedServer => (s as { kind?: unknown }).kind === 'mcp_server');
    if (carried.length === 0) return;
    // Listing failed: the servers stay the run's (carried on), offering no tools in this execution.
    const servers =
      (await this.list(carried)) ??
      carried.map((c) => ({
        name: c.name,
        source: c.source,
        transport: c.transport ?? ('stdio' as const),
        ...(c.config ? { config: c.config } : {}),
        tools: [],
        toolsHash: c.toolsHash,
        error: 'could not be listed again after continue-as-new',
      }));
    for (const s of servers) {
      const before = carried.find((c) => c.name === s.name);
      if (before && before.toolsHash !== s.toolsHash) {
        this.emit({
          kind: 'notice',
          message: `mcp: ${s.name}: tools changed since the last execution; ${describeMcpServer(s)}`,
        });
      }
    }
    this.use(servers);
  }

  /** A call reported that its server's tools changed: they are listed again before the next model call. */
  markChanged(name: string): void {
    const ref = this.byName.get(name);
    if (ref) this.changed.add(ref.server.name);
  }

  /** Whether a call reported changed tools since the last refresh. */
  get changesPending(): boolean {
    return this.changed.size > 0;
  }

  /** The defined point: between a turn's tool calls and the next model call. */
  async refreshIfChanged(): Promise<void> {
    if (this.changed.size === 0) return;
    const names = [...this.changed];
    this.changed.clear();
    const carried = this.servers.filter((s) => names.includes(s.name));
    const servers = await this.list(carried);
    if (!servers) return;
    const next = this.servers.map((s) => servers.find((n) => n.name === s.name) ?? s);
    for (const s of servers) {
      const old = this.servers.find((o) => o.name === s.name);
      const was = new Set(old?.tools.map((t) => t.name) ?? []);
      const now = new Set(s.tools.map((t) => t.name));
      const added = [...now].filter((n) => !was.has(n));
      const removed = [...was].filter((n) => !now.has(n));
      const what = [
        added.length ? `added ${added.join(', ')}` : '',
        removed.length ? `removed ${removed.join(', ')}` : '',
      ].filter(Boolean);
      this.emit({
        kind: 'notice',
        message:
          `mcp: ${s.name}: tools changed${what.length ? `: ${what.join('; ')}` : ''}${s.error ? ` (${s.error})` : ''}`.slice(
            0,
            1000,
          ),
      });
    }
    this.use(next);
  }

  /** Keeps the servers in the run context's sources (carried across continue-as-new), now and after every change. */
  carryIn(sources: unknown[]): void {
    this.carriedIn = sources;
    this.syncCarried();
  }

  private syncCarried(): void {
    const sources = this.carriedIn;
    if (!sources) return;
    const kept = sources.filter((s) => (s as { kind?: unknown }).kind !== 'mcp_server');
    sources.splice(0, sources.length, ...kept, ...this.carried());
  }

  /** What continue-as-new carries (in the context's sources). */
  private carried(): CarriedServer[] {
    return this.servers.map((s) => ({
      kind: 'mcp_server',
      name: s.name,
      source: s.source,
      transport: s.transport,
      ...(s.config ? { config: s.config } : {}),
      toolsHash: s.toolsHash,
      tools: s.tools.length,
    }));
  }

  /** For the run's details: `mcp: github, files: 15 tools`. */
  describe(): string | undefined {
    if (!this.active) return undefined;
    return `mcp: ${this.servers.map((s) => s.name).join(', ')}: ${this.byName.size} tools`;
  }

  /** Lists servers in an activity; a failure keeps the list the run has (and says so), never ends the run. */
  private async list(
    servers: readonly { name: string; source: McpSource; config?: McpServerConfig }[],
  ): Promise<McpServerListing[] | undefined> {
    try {
      const { servers: listed } = await this.activities.listMcpTools.executeWithOptions({ summary: 'list MCP tools' }, [
        this.listInput(servers),
      ]);
      return listed;
    } catch (err) {
      if (stopping(err)) throw err;
      this.emit({
        kind: 'notice',
        message: `mcp: listing ${servers.map((s) => s.name).join(', ')} again failed (${failureMessage(err)}); the run keeps its tools`,
      });
      return undefined;
    }
  }

  /** From run start on, the workspace's recorded real path (docs/file-safety.md), as for every tool. */
  useWorkspace(workspace: string): void {
    this.run.workspace = workspace;
  }

  private listInput(servers: readonly { name: string; source: McpSource; config?: McpServerConfig }[]) {
    return {
      servers: servers.map((s) => ({ name: s.name, source: s.source, ...(s.config ? { config: s.config } : {}) })),
      ...(this.run.workspace ? { workspace: this.run.workspace } : {}),
      ...(this.run.network ? { network: true } : {}),
    };
  }

  /** Whether the run's `tools` lets the model see this MCP tool (every one, when it names none). */
  private named(name: string): boolean {
    const only = this.run.only;
    return !only?.length || only.some((entry) => name === entry || name.startsWith(`${entry}__`));
  }

  private use(servers: McpServerListing[]): void {
    this.servers = servers;
    this.byName.clear();
    // Servers come operator first (the run's, the worker's, the workspace's): on a name offered twice the first keeps it.
    for (const server of servers) {
      for (const tool of server.tools) {
        if (!this.named(tool.name)) continue;
        const taken = this.byName.get(tool.name);
        if (!taken) {
          this.byName.set(tool.name, { server, tool });
        } else if (taken.server !== server) {
          this.emit({
            kind: 'notice',
            message: `mcp: ${server.name}: tool ${tool.name} is left out: ${taken.server.name} (${taken.server.source}) offers a tool by that name`,
          });
        }
      }
    }
    this.specsCache = [...this.byName.values()].map(({ tool }) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
    }));
    this.hashCache = this.specsCache.length ? hashString(JSON.stringify(this.specsCache)) : undefined;
    this.onChange(this.specsCache, this.hashCache);
    this.syncCarried();
  }
}
