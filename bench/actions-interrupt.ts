import { getRun, interruptRun, runResult, startRun } from '../src/client';
import { AnthropicProvider } from '../src/models/anthropic';
import type { AgentRunInput } from '../src/shared';
import { actionsWorker } from './actions-metrics';
import { startPacedServer } from './actions-stream';
import { uniqueName, type BenchContext } from './context';
import { createBenchRegistry } from './scenario';
import { withWorkers } from './workers';

/**
 * What fewer heartbeats must not cost: how late an interrupt stops a streaming model call. A run
 * whose one model call streams for 20 s (the same local Messages API as the streamed actions
 * figure) is interrupted this long after the first delta: each moment just after one of the
 * call's heartbeats (+1, +3, +7 s and, with 4 s gaps, +11 s), where the next is furthest away.
 */
export const INTERRUPT_AFTER_MS = [1_200, 3_200, 7_200, 11_200];

export interface InterruptRow {
  /** After the first streamed delta, ms. */
  interruptAfterMs: number;
  /** Signal sent → run's result (status interrupted), ms. */
  runEndedMs: number;
  /** Signal sent → the model server saw the request closed (the call aborted it), ms. */
  callAbortedMs: number;
  exitReason: string;
}

export async function measureInterruptLatency(ctx: BenchContext): Promise<InterruptRow[]> {
  const server = await startPacedServer();
  const provider = new AnthropicProvider({ apiKey: 'bench', baseURL: server.url });
  const taskQueue = uniqueName('actions-interrupt');
  const worker = await actionsWorker(ctx, taskQueue, provider, { tools: createBenchRegistry() });
  const rows: InterruptRow[] = [];
  try {
    await withWorkers([worker], async () => {
      for (const after of INTERRUPT_AFTER_MS) {
        const workflowId = uniqueName('actions-interrupt');
        const input: AgentRunInput = { prompt: 'answer', model: 'claude-bench-stream', maxIterations: 2 };
        await startRun(ctx.client, input, { workflowId, taskQueue });
        // The previous run's answer stays readable until this run's request arrives.
        const first = await until(() => (server.closedAt() === undefined ? server.wroteAt(1) : undefined), 30_000);
        await sleep(first + after - Date.now());
        const sentAt = Date.now();
        const handle = getRun(ctx.client, workflowId);
        await interruptRun(handle, 'bench: interrupt latency');
        const exitReason = await runResult(handle).then(
          (result) => result.exitReason,
          (error: Error) => `failed: ${error.message}`,
        );
        const runEndedMs = Date.now() - sentAt;
        const closed = await until(() => server.closedAt(), 30_000);
        rows.push({ interruptAfterMs: after, runEndedMs, callAbortedMs: closed - sentAt, exitReason });
        ctx.log(
          `actions: interrupt ${after} ms into the stream: run ended after ${runEndedMs} ms, ` +
            `call aborted after ${closed - sentAt} ms (${exitReason})`,
        );
      }
    });
  } finally {
    await server.close();
  }
  return rows;
}

export function formatInterruptLatency(rows: InterruptRow[]): string[] {
  return [
    '  an interrupt during a 20 s streamed call (signal sent → run ended / model request aborted):',
    ...rows.map(
      (r) =>
        `    ${String(r.interruptAfterMs).padStart(6)} ms into the stream: run ended ${r.runEndedMs} ms, ` +
        `request aborted ${r.callAbortedMs} ms (${r.exitReason})`,
    ),
  ];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function until<T>(read: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('actions: the streamed call did not get that far');
    await sleep(20);
  }
}
