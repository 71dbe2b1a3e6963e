import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { CACHE_MISS_ERROR_TYPE, hashString } from '../shared/conversation';
import type { CallModelInput, PrepareRunInput, PrepareRunOutput } from '../shared/activity-io';
import type { ToolSpec } from '../shared/messages';
import type { ListMcpToolsInput as ListInput, ListMcpToolsOutput as ListOutput } from '../shared/mcp';
import type { McpRuntime } from '../mcp';
import { ErrorTypes } from '../shared/constants';

/** Tool lists kept per worker (by hash), so model calls send them only with full loads and after a change. */
const MAX_KEPT_LISTS = 64;

/**
 * The activities' side of MCP (docs/mcp.md): run start lists the run's servers (inside
 * `prepareRun`, so a run without servers schedules nothing new), `listMcpTools` lists them again
 * after a reported change, and model calls resolve the run's MCP tool definitions by hash.
 */
export function createMcpActivities(runtime: McpRuntime, defaultWorkspace: () => string) {
  const kept = new Map<string, ToolSpec[]>();

  /**
   * Run start: the servers the run uses and their tools (failures are per server). A cancel (an
   * interrupt during run start) stops the wait at once, with the activity's cancellation.
   */
  async function listForRun(input: PrepareRunInput): Promise<NonNullable<PrepareRunOutput['mcp']>> {
    const listed = await runtime.listForRun({
      ...(input.mcpServers ? { runServers: input.mcpServers } : {}),
      workspace: input.context.workspace ?? defaultWorkspace(),
      network: input.context.network === true,
      signal: Context.current().cancellationSignal,
    });
    tellOperator(listed.servers);
    for (const note of listed.notes) log.warn(`MCP: ${note}`);
    return listed;
  }

  /** The worker's log names every server a run could not use, and why (the run's notices say it too). */
  function tellOperator(servers: { name: string; source: string; error?: string }[]): void {
    for (const s of servers) if (s.error) log.warn(`MCP server '${s.name}' (${s.source}) is unavailable: ${s.error}`);
  }

  /** Lists servers again, between turns, after a call reported that a server's tools changed. */
  async function listMcpTools(input: ListInput): Promise<ListOutput> {
    const servers = await runtime.listServers(
      input.servers.slice(0, 20),
      input.workspace ?? defaultWorkspace(),
      input.network === true,
    );
    tellOperator(servers);
    return { servers };
  }

  /** The run's MCP tool definitions for a model call: sent, or kept from an earlier call on this worker. */
  function toolSpecs(input: Pick<CallModelInput, 'mcpTools' | 'mcpToolsHash' | 'conversation'>): ToolSpec[] {
    if (input.mcpToolsHash === undefined) return [];
    if (input.mcpTools) {
      if (hashString(JSON.stringify(input.mcpTools)) !== input.mcpToolsHash) {
        throw ApplicationFailure.nonRetryable(
          'the MCP tool definitions do not match their hash',
          ErrorTypes.McpToolsMismatch,
        );
      }
      kept.delete(input.mcpToolsHash);
      kept.set(input.mcpToolsHash, input.mcpTools);
      while (kept.size > MAX_KEPT_LISTS) kept.delete(kept.keys().next().value as string);
      return input.mcpTools;
    }
    const specs = kept.get(input.mcpToolsHash);
    if (specs) return specs;
    throw ApplicationFailure.create({
      type: CACHE_MISS_ERROR_TYPE,
      message: `conversation ${input.conversation.id}: this worker holds no copy of the run's MCP tool definitions; the workflow will resend them`,
      nonRetryable: true,
      category: ApplicationFailureCategory.BENIGN,
    });
  }

  return { listForRun, listMcpTools, toolSpecs };
}
