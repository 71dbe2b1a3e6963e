import * as path from 'node:path';
import { startRun } from '../src/client';
import { createMcpRuntime } from '../src/mcp';
import { ScriptedModel, text, toolUse } from '../src/models/scripted';
import type { AgentRunInput } from '../src/shared';
import { createReadFileTool, ToolRegistry } from '../src/tools';
import { actionsWorker, countActions, patchUpserts, totalOf, type ActionCounts } from './actions-metrics';
import { settle, uniqueName, type BenchContext } from './context';
import { BENCH_MODEL, benchDocPath, writeBenchDoc } from './scenario';
import { withWorkers } from './workers';

const DOC_BYTES = 256;

export interface OneCallRow {
  /** `mcp`: one call of a read-only tool on a stdio MCP server; `read_file`: the built-in tool. */
  call: 'mcp' | 'read_file';
  total: number;
  byType: ActionCounts;
  patchUpserts: number;
}

/**
 * What one MCP tool call costs in billable actions against one `read_file` call: a run whose model
 * calls the tool once and then answers, on the production worker, after a warm-up run of each. The
 * MCP server is the MCP figure's (`mcp-server.ts`: the official SDK's `McpServer` over stdio, one
 * read-only `echo` tool), named in the run's input as a user would.
 */
export async function measureOneCallActions(ctx: BenchContext, metricsUrl: string): Promise<OneCallRow[]> {
  await writeBenchDoc(ctx.workspace, DOC_BYTES);
  const server = { command: process.execPath, args: [path.join(__dirname, 'mcp-server.js')] };
  const rows: OneCallRow[] = [];
  for (const call of ['read_file', 'mcp'] as const) {
    const step = () =>
      call === 'mcp'
        ? toolUse([{ name: 'mcp__bench__echo', input: { text: 'durable' } }])
        : toolUse([{ name: 'read_file', input: { path: benchDocPath(DOC_BYTES) } }]);
    const model = new ScriptedModel([step(), text('done'), step(), text('done')]);
    const runtime = createMcpRuntime({ workspaceConfig: false });
    const taskQueue = uniqueName(`actions-one-${call}`);
    const worker = await actionsWorker(ctx, taskQueue, model, {
      tools: new ToolRegistry([createReadFileTool()]),
      mcp: runtime,
    });
    const input: AgentRunInput = {
      prompt: 'call the tool once',
      model: BENCH_MODEL,
      maxIterations: 3,
      tools: ['read_file'],
      // The same run but for the MCP server it names (`tools` chooses among the built-in tools only).
      ...(call === 'mcp' ? { mcpServers: { bench: server } } : {}),
    };
    const once = async () => {
      const handle = await startRun(ctx.client, input, { workflowId: uniqueName(`actions-one-${call}`), taskQueue });
      const settled = await settle(handle, 60_000);
      if (!settled.ok) throw new Error(`actions: the one-${call} run did not complete: ${settled.error}`);
      return handle;
    };
    try {
      await withWorkers([worker], async () => {
        await once(); // warm-up: the MCP server's process and tool list, first connections
        const { value: handle, actions } = await countActions(metricsUrl, once);
        const row = { call, total: totalOf(actions), byType: actions, patchUpserts: await patchUpserts(handle) };
        ctx.log(`actions: a run with one ${call} call: ${row.total} actions`);
        rows.push(row);
      });
    } finally {
      await runtime.close();
    }
  }
  return rows;
}
