import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { decodeArrayFromPayloads } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { modelProgress } from '../src/activities/model-progress';
import { AnthropicProvider } from '../src/models/anthropic';
import type { ModelProvider } from '../src/models/types';
import { WORKFLOW_TYPE, type AgentRunInput } from '../src/shared';
import { parseModelProgress } from '../src/shared/live-progress';
import type { BenchContext } from './context';
import { uniqueName } from './context';
import {
  bundleBenchWorkflows,
  connectBenchClient,
  connectBenchWorker,
  externalServer,
  makeWorkDir,
  startBenchServer,
} from './server';
import { createAgentWorker } from '../src/worker';
import { createBenchRegistry } from './scenario';
import { installQuietRuntime, withWorkers } from './workers';
import { baseActivityName } from '../src/shared/activity-names';

/**
 * What live text costs: history bytes of a one-call run whose answer streams with its text in the
 * heartbeat details (live) and without (plain), for a short and a long answer; and how stale the
 * text a follower reads from `describe()` is. The model is the real Anthropic provider against a
 * local server that streams each answer in 400 deltas over about 4 s.
 *
 *   npm run build && node dist/bench/stream-figure.js
 */
export const STREAM_COMMAND = 'npm run build && node dist/bench/stream-figure.js';

export interface StreamRow {
  answerBytes: number;
  live: boolean;
  historyBytes: number;
  historyEvents: number;
}

export interface LagFigure {
  /** The worker's `maxHeartbeatThrottleInterval` during the run, ms. */
  throttleMs: number;
  samples: number;
  median: number;
  p90: number;
  max: number;
}

export interface StreamFigure {
  rows: StreamRow[];
  /** Per model call: live − plain history bytes, by answer size. */
  streamCostBytes: Record<string, number>;
  /**
   * Age of the newest streamed text `describe()` showed, sampled every 50 ms while the long answer
   * streamed: with the production worker's 1 s heartbeat throttle, and with 250 ms for comparison.
   */
  describeLagMs: LagFigure[];
}

const SIZES = [2_000, 200_000];
const DELTAS = 400;
const DELTA_GAP_MS = 10;
/** Heartbeat throttles compared, ms: the production worker's, and a shorter one. */
const THROTTLES = [1000, 250];

export async function measureStream(ctx: BenchContext): Promise<StreamFigure> {
  const server = await startStreamingServer();
  const rows: StreamRow[] = [];
  const describeLagMs: LagFigure[] = [];
  const provider = new AnthropicProvider({ apiKey: 'bench', baseURL: server.url });
  /** One run per answer size on a fresh production worker; returns the lag samples of the last. */
  const runs = async (live: boolean, sizes: number[], throttle?: number): Promise<number[]> => {
    const taskQueue = uniqueName(`stream-${live ? 'live' : 'plain'}`);
    const worker = await createAgentWorker({
      connection: ctx.connection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: ctx.bundlePath,
      deps: { models: () => streamed(provider, live), tools: createBenchRegistry(), defaultWorkspace: ctx.workspace },
      ...(throttle
        ? { workerOptions: { maxHeartbeatThrottleInterval: throttle, defaultHeartbeatThrottleInterval: throttle } }
        : {}),
    });
    let lag: number[] = [];
    await withWorkers([worker], async () => {
      for (const size of sizes) {
        const input: AgentRunInput = { prompt: 'answer', model: 'claude-bench-stream', maxIterations: 2 };
        const handle = await ctx.client.workflow.start(WORKFLOW_TYPE, {
          taskQueue,
          workflowId: uniqueName('stream'),
          args: [input],
        });
        const sampling = live ? sampleLag(handle, server) : undefined;
        server.next = 'x'.repeat(size);
        await handle.result();
        if (sampling) lag = await sampling.stop();
        if (throttle) continue;
        const history = await handle.fetchHistory();
        const row: StreamRow = {
          answerBytes: size,
          live,
          historyBytes: temporal.api.history.v1.History.encode(history).finish().length,
          historyEvents: history.events?.length ?? 0,
        };
        ctx.log(`stream: ${live ? 'live ' : 'plain'} ${size} B answer → history ${row.historyBytes} B`);
        rows.push(row);
      }
    });
    return lag;
  };
  try {
    describeLagMs.push(summarize(THROTTLES[0]!, await runs(true, SIZES)));
    await runs(false, SIZES);
    describeLagMs.push(summarize(THROTTLES[1]!, await runs(true, [Math.max(...SIZES)], THROTTLES[1])));
  } finally {
    await server.close();
  }
  const bytes = (size: number, live: boolean) => rows.find((r) => r.answerBytes === size && r.live === live)!;
  const streamCostBytes = Object.fromEntries(
    SIZES.map((s) => [String(s), bytes(s, true).historyBytes - bytes(s, false).historyBytes]),
  );
  return { rows, streamCostBytes, describeLagMs };
}

function summarize(throttleMs: number, lag: number[]): LagFigure {
  const sorted = [...lag].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { throttleMs, samples: sorted.length, median: at(0.5), p90: at(0.9), max: sorted[sorted.length - 1] ?? NaN };
}

export function formatStream(figure: StreamFigure): string {
  const lines = [
    'Live text: history bytes of a one-model-call run, streamed text in heartbeat details (live) or not (plain)',
    `  reproduce: ${STREAM_COMMAND}`,
    '  answer      plain history   live history   live − plain',
  ];
  for (const size of SIZES) {
    const plain = figure.rows.find((r) => r.answerBytes === size && !r.live)!;
    const live = figure.rows.find((r) => r.answerBytes === size && r.live)!;
    lines.push(
      `  ${String(size).padStart(7)} B   ${String(plain.historyBytes).padStart(11)} B   ${String(live.historyBytes).padStart(10)} B   ${String(
        figure.streamCostBytes[String(size)],
      ).padStart(8)} B`,
    );
  }
  for (const l of figure.describeLagMs) {
    lines.push(
      `  heartbeat throttle ${l.throttleMs} ms: describe() shows streamed text ${l.median} ms old at the median, ` +
        `${l.p90} ms at p90, ${l.max} ms at most (${l.samples} samples every 50 ms)`,
    );
  }
  return lines.join('\n');
}

/** The provider with `progress` wired as callModel wires it (live), or stripped (plain). */
function streamed(provider: ModelProvider, live: boolean): ModelProvider {
  return {
    name: provider.name,
    call: (request, ctx) => {
      const { progress: _p, ...plain } = ctx;
      if (!live) return provider.call(request, plain);
      return provider.call(
        request,
        ctx.progress ? ctx : { ...ctx, ...modelProgress(Context.current(), request.model) },
      );
    },
  };
}

/** Polls describe() every 50 ms; for each poll, how long ago the server wrote the newest offset it shows. */
function sampleLag(handle: ReturnType<Client['workflow']['getHandle']>, server: StreamingServer) {
  const lags: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const d = await handle.describe().catch(() => undefined);
      const pending = d?.raw.pendingActivities?.find(
        (a) => baseActivityName(a.activityType?.name ?? '') === 'callModel',
      );
      const payloads = pending?.heartbeatDetails?.payloads;
      if (payloads?.length) {
        const [details] = await decodeArrayFromPayloads(handle.client.options.loadedDataConverter, payloads);
        const chars = parseModelProgress(details)?.text?.chars;
        const wrote = chars !== undefined ? server.wroteAt.get(chars) : undefined;
        if (wrote !== undefined && server.endedAt === undefined) lags.push(Date.now() - wrote);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return lags;
    },
  };
}

interface StreamingServer {
  url: string;
  /** The answer of the next request. */
  next: string;
  /** When the server wrote the delta that ends at each character offset. */
  wroteAt: Map<number, number>;
  endedAt: number | undefined;
  close(): Promise<void>;
}

/** A minimal streaming Messages API: the queued answer as one text block in DELTAS deltas. */
async function startStreamingServer(): Promise<StreamingServer> {
  const state: StreamingServer = {
    url: '',
    next: '',
    wroteAt: new Map(),
    endedAt: undefined,
    close: async () => new Promise<void>((resolve) => httpServer.close(() => resolve())),
  };
  const httpServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => void answer(res).catch(() => res.destroy()));
  });
  const answer = async (res: http.ServerResponse) => {
    const text = state.next;
    state.wroteAt = new Map();
    state.endedAt = undefined;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (type: string, data: object) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const usage = { input_tokens: 10, output_tokens: 1 };
    send('message_start', {
      message: {
        id: 'msg_b',
        type: 'message',
        role: 'assistant',
        model: 'claude-bench-stream',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    });
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    const size = Math.ceil(text.length / DELTAS);
    for (let i = 0; i < text.length; i += size) {
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: text.slice(i, i + size) } });
      state.wroteAt.set(Math.min(i + size, text.length), Date.now());
      await new Promise((r) => setTimeout(r, DELTA_GAP_MS));
    }
    send('content_block_stop', { index: 0 });
    send('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
    send('message_stop', {});
    state.endedAt = Date.now();
    res.end();
  };
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  return state;
}

/** Standalone: its own dev server (or TEMPORAL_ADDRESS), the figure printed with the command. */
async function main(): Promise<void> {
  installQuietRuntime();
  const log = (m: string) => process.stderr.write(`[bench] ${m}\n`);
  const workDir = await makeWorkDir();
  const workspace = path.join(workDir, 'workspace');
  await fs.mkdir(workspace);
  const server = externalServer() ?? (await startBenchServer('embedded', workDir, log));
  const connection = await connectBenchWorker(server);
  const client = await connectBenchClient(server);
  const clientConnection = client.connection;
  try {
    const bundlePath = await bundleBenchWorkflows(workDir);
    const figure = await measureStream({
      client,
      connection,
      address: server.address,
      server: server.description,
      bundlePath,
      workspace,
      quick: false,
      log,
      serverCpuMs: () => server.cpuMs(),
    });
    process.stdout.write(`${formatStream(figure)}\n`);
  } finally {
    await clientConnection.close();
    await connection.close();
    await server.stop();
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
