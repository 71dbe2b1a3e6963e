import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRun, startRun } from '../src/client';
import { follow } from '../src/cli/run-command';
import type { LiveSink } from '../src/cli/live-text';
import { AnthropicProvider } from '../src/models/anthropic';
import type { AgentRunInput } from '../src/shared';
import { actionsWorker, countActions, patchUpserts, totalOf, type ActionCounts } from './actions-metrics';
import { uniqueName, type BenchContext } from './context';
import { createBenchRegistry } from './scenario';
import { withWorkers } from './workers';

/** The streamed call: DELTAS deltas of DELTA_CHARS characters, one every DELTA_GAP_MS (20 s in all). */
const DELTAS = 200;
const DELTA_CHARS = 10;
const DELTA_GAP_MS = 100;

export interface StreamedRow {
  label: string;
  total: number;
  byType: ActionCounts;
  /** Of the upserts: the SDK's `TemporalChangeVersion` writes, one per `patched()` flag. */
  patchUpserts: number;
  /** Token written by the fake server → the same text written to the follower's terminal, ms. */
  lag: { median: number; p90: number; max: number; samples: number };
}

/**
 * One run whose single model call streams for 20 s from a local Messages API (the real Anthropic
 * provider), followed live from its start to its result by the CLI's own `follow` (what `run` and
 * `durable-agent follow` do): once as `run` with its inline worker in the same process (in-process
 * delivery may serve it), once as a follower elsewhere (it may only use the server).
 */
export async function measureStreamedActions(ctx: BenchContext, metricsUrl: string): Promise<StreamedRow[]> {
  const server = await startPacedServer();
  const provider = new AnthropicProvider({ apiKey: 'bench', baseURL: server.url });
  const rows: StreamedRow[] = [];
  try {
    for (const mode of ['inline', 'remote'] as const) {
      const taskQueue = uniqueName(`actions-stream-${mode}`);
      const worker = await actionsWorker(ctx, taskQueue, provider, { tools: createBenchRegistry() });
      await withWorkers([worker], async () => {
        const lags: number[] = [];
        const workflowId = uniqueName('actions-stream');
        const { actions } = await countActions(metricsUrl, async () => {
          const input: AgentRunInput = { prompt: 'answer', model: 'claude-bench-stream', maxIterations: 2 };
          // As the CLI starts it: the client helper, which sets the search attributes at start.
          await startRun(ctx.client, input, { workflowId, taskQueue });
          const sink = lagSink(server, lags);
          await follow(getRun(ctx.client, workflowId), () => {}, { live: sink, inProcess: mode === 'inline' });
        });
        const sorted = [...lags].sort((a, b) => a - b);
        const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
        const row: StreamedRow = {
          label:
            mode === 'inline'
              ? '20 s streamed call, `run` (inline worker)'
              : '20 s streamed call, `follow` from elsewhere',
          total: totalOf(actions),
          byType: actions,
          patchUpserts: await patchUpserts(getRun(ctx.client, workflowId)),
          lag: { median: at(0.5), p90: at(0.9), max: sorted[sorted.length - 1] ?? NaN, samples: sorted.length },
        };
        ctx.log(`actions: ${row.label}: ${row.total} actions, text lag median ${row.lag.median} ms`);
        rows.push(row);
      });
    }
  } finally {
    await server.close();
  }
  return rows;
}

/**
 * A terminal that notes, for every delta of the answer, how long after the server wrote it the
 * delta's last character reached the screen: one sample per delta, so text that only arrives at the
 * end (from the events and the result) counts for all it is.
 */
function lagSink(server: PacedServer, lags: number[]): LiveSink {
  let printed = 0;
  return {
    styled: false,
    write(chunk) {
      const chars = chunk.replace(/[^x]/g, '').length;
      if (!chars) return;
      const now = Date.now();
      const before = Math.floor(printed / DELTA_CHARS);
      printed += chars;
      for (let delta = before + 1; delta <= Math.floor(printed / DELTA_CHARS); delta++) {
        const wrote = server.wroteAt(delta * DELTA_CHARS);
        if (wrote !== undefined) lags.push(now - wrote);
      }
    },
  };
}

export interface PacedServer {
  url: string;
  /** When the server wrote the delta holding character `offset` (1-based) of the answer. */
  wroteAt(offset: number): number | undefined;
  /** When the latest answer's connection closed (the client aborted it, or it ended). */
  closedAt(): number | undefined;
  close(): Promise<void>;
}

/** A streaming Messages API answering every request with one text block of DELTAS paced deltas of `x`. */
export async function startPacedServer(): Promise<PacedServer> {
  let times: number[] = [];
  let closed: number | undefined;
  const httpServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => void answer(res).catch(() => res.destroy()));
  });
  const answer = async (res: http.ServerResponse) => {
    times = [];
    closed = undefined;
    res.on('close', () => void (closed = Date.now()));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const usage = { input_tokens: 10, output_tokens: 1 };
    const message = { id: 'msg_a', type: 'message', role: 'assistant', model: 'claude-bench-stream', content: [] };
    send('message_start', { message: { ...message, stop_reason: null, stop_sequence: null, usage } });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    for (let i = 0; i < DELTAS && !res.destroyed; i++) {
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'x'.repeat(DELTA_CHARS) } });
      times.push(Date.now());
      await new Promise((r) => setTimeout(r, DELTA_GAP_MS));
    }
    send('content_block_stop', { index: 0 });
    send('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
    send('message_stop', {});
    res.end();
  };
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`,
    wroteAt: (offset) => times[Math.ceil(offset / DELTA_CHARS) - 1],
    closedAt: () => closed,
    close: () => new Promise<void>((resolve) => httpServer.close(() => resolve())),
  };
}
