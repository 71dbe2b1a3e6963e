/**
 * A local Anthropic Messages API (`POST /v1/messages`, streaming only) that streams each answer
 * slowly, in many small deltas, and records when it sent what: tests compare the CLI's output
 * times with the end of the stream. node:http, no deps. Each request takes the next queued answer;
 * with none queued it answers 500.
 */
import { Context } from '@temporalio/activity';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { modelProgress } from '../../src/activities/model-progress';
import type { ModelProvider } from '../../src/models/types';

export interface SlowAnswer {
  text: string;
  /** Streamed before the text, as a thinking block. */
  thinking?: string;
  /** Characters per delta. Default 40. */
  chunkChars?: number;
  /** Pause after each delta, ms. Default 0. */
  delayMs?: number;
  /** Awaited after `message_start`, before the first delta: lets a test hold the answer back. */
  gate?: Promise<void>;
}

export interface StreamedAnswer {
  receivedAt: number;
  /** `Date.now()` when the first text delta was written. */
  firstTextAt?: number;
  /** `Date.now()` when `message_stop` was written. */
  endedAt?: number;
}

export interface SlowStream {
  url: string;
  streamed: StreamedAnswer[];
  enqueue(...answers: SlowAnswer[]): void;
  close(): Promise<void>;
}

export async function startSlowStream(): Promise<SlowStream> {
  const queue: SlowAnswer[] = [];
  const streamed: StreamedAnswer[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = queue.shift();
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages') || !answer) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'slow-stream: nothing queued' } }),
        );
        return;
      }
      const record: StreamedAnswer = { receivedAt: Date.now() };
      streamed.push(record);
      void stream(res, answer, record).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streamed,
    enqueue: (...answers) => void queue.push(...answers),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function stream(res: http.ServerResponse, answer: SlowAnswer, record: StreamedAnswer): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_slow' });
  res.flushHeaders();
  const size = answer.chunkChars ?? 40;
  const send = async (event: string, data: Record<string, unknown>) => {
    if (res.destroyed) throw new Error('client went away');
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
    if (event === 'content_block_delta' && answer.delayMs) await delay(answer.delayMs);
  };
  const usage = { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  await send('message_start', {
    message: {
      id: 'msg_slow',
      type: 'message',
      role: 'assistant',
      model: 'claude-slow',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  await answer.gate;
  let index = 0;
  if (answer.thinking !== undefined) {
    await send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const piece of chunks(answer.thinking, size)) {
      await send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
    }
    await send('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'c2ln' } });
    await send('content_block_stop', { index });
    index += 1;
  }
  await send('content_block_start', { index, content_block: { type: 'text', text: '' } });
  for (const piece of chunks(answer.text, size)) {
    record.firstTextAt ??= Date.now();
    await send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
  }
  await send('content_block_stop', { index });
  await send('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { ...usage, output_tokens: Math.ceil(answer.text.length / 4) },
  });
  await send('message_stop', {});
  record.endedAt = Date.now();
  res.end();
}

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A provider whose calls report their streamed deltas as heartbeat details (`modelProgress`), as
 * `callModel` does once it passes `progress`: a context that already has it is left alone. With
 * `live: false` it strips `progress`, for a baseline without streamed details.
 */
export function withLiveProgress(provider: ModelProvider, live = true): ModelProvider {
  return {
    name: provider.name,
    call: (request, ctx) => {
      if (!live) {
        const { progress: _dropped, ...rest } = ctx;
        return provider.call(request, rest);
      }
      if (ctx.progress) return provider.call(request, ctx);
      return provider.call(request, { ...ctx, ...modelProgress(Context.current(), request.model) });
    },
  };
}
