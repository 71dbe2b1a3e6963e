import type { Client, WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { WORKFLOW_TYPE, type AgentRunInput } from '../src/shared';
import type { NaiveRunInput } from './naive-workflow';
import { BENCH_MODEL, benchPrompt, type BenchTool } from './scenario';
import type { Subject } from './workers';

/** What every figure needs: the server, the bundle, a workspace, and how big to make the runs. */
export interface BenchContext {
  client: Client;
  connection: NativeConnection;
  address: string;
  /** The server's description, for the report. */
  server: string;
  bundlePath: string;
  workspace: string;
  quick: boolean;
  log: (message: string) => void;
  /** CPU time used by the Temporal server so far, when the bench runs it (ms). */
  serverCpuMs: () => Promise<number | undefined>;
}

export const uniqueName = (label: string) => `bench-${label}-${randomUUID().slice(0, 8)}`;

export interface StartRunOptions {
  subject: Subject;
  taskQueue: string;
  iterations: number;
  outputBytes: number;
  /** The tool the agent calls each iteration (default `emit_output`; `read_file` needs `writeBenchDoc`). */
  tool?: BenchTool;
  /** Naive only: run model or tool calls as local activities. */
  naive?: Pick<NaiveRunInput, 'modelCalls' | 'toolCalls'>;
  workflowId?: string;
}

/**
 * Starts one run of the bench agent: `iterations` iterations (a model call and one tool call each),
 * then the closing summary call at the iteration limit.
 */
export async function startRun(
  client: Client,
  options: StartRunOptions,
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const workflowId = options.workflowId ?? uniqueName(options.subject);
  const prompt = benchPrompt(options.outputBytes, options.tool);
  if (options.subject === 'ours') {
    const input: AgentRunInput = { prompt, model: BENCH_MODEL, maxIterations: options.iterations };
    return client.workflow.start(WORKFLOW_TYPE, { taskQueue: options.taskQueue, workflowId, args: [input] });
  }
  const input: NaiveRunInput = { prompt, model: BENCH_MODEL, maxIterations: options.iterations, ...options.naive };
  return client.workflow.start('naiveAgentWorkflow', { taskQueue: options.taskQueue, workflowId, args: [input] });
}

/** Waits for a run (following continue-as-new); a run still going after `timeoutMs` is terminated. */
export async function settle(
  handle: WorkflowHandle,
  timeoutMs: number,
): Promise<{ ok: boolean; result?: unknown; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    const outcome = await Promise.race([handle.result(), timeout]);
    if (outcome === 'timeout') {
      await handle.terminate(`bench: still running after ${timeoutMs / 1000} s`).catch(() => {});
      return { ok: false, error: `still running after ${timeoutMs / 1000} s; terminated` };
    }
    return { ok: true, result: outcome };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}
