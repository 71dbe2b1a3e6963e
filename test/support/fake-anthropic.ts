/**
 * A local fake of the Anthropic Messages API (`POST /v1/messages`) for tests: node:http, no deps.
 *
 * Each request takes the next queued behaviour: a message (answered as an SSE stream when the
 * request asks for `stream: true`, else as JSON), an API error, a connection reset, a hang, a
 * malformed body, or a mid-stream `event: error`. Every request is recorded (headers + parsed
 * body). With an empty queue the fake answers 500 "fake-anthropic: no response queued", so a test
 * that makes one call too many fails loudly.
 *
 * Point the real SDK at it with `new Anthropic({ baseURL: fake.url, apiKey: 'test' })` or
 * `ANTHROPIC_BASE_URL=<fake.url>`.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** A successful answer. Content blocks are sent as the API would stream them (deltas for text, tool input, thinking). */
export interface FakeMessage {
  kind: 'message';
  content: Array<{ type: string; [key: string]: unknown }>;
  stop_reason?: string | null;
  usage?: FakeUsage;
  id?: string;
  /** Defaults to the request's model. */
  model?: string;
  /** Sent as the `request-id` header. Defaults to `req_fake_<n>`. */
  requestId?: string;
  headers?: Record<string, string>;
  /** Pause between SSE events (ms), to exercise heartbeats. */
  eventDelayMs?: number;
  /** SSE `ping` events to send (one per `eventDelayMs`) before `message_start`. */
  pings?: number;
}

export interface FakeError {
  kind: 'error';
  status: number;
  /** The body's `error.type`, e.g. `rate_limit_error`. */
  type: string;
  message: string;
  /** Sent as `error.details.error_code`. */
  errorCode?: string;
  headers?: Record<string, string>;
  requestId?: string;
}

/** Destroy the socket: before any response, or after `afterEvents` SSE events of `message`. */
export interface FakeReset {
  kind: 'reset';
  afterEvents?: number;
  message?: Omit<FakeMessage, 'kind'>;
}

/** Never answer (or stop after `afterEvents` SSE events) until the client goes away. */
export interface FakeHang {
  kind: 'hang';
  afterEvents?: number;
  message?: Omit<FakeMessage, 'kind'>;
}

/** A 200 whose body is not what was promised. Defaults to an SSE event with invalid JSON (or an invalid JSON body). */
export interface FakeMalformed {
  kind: 'malformed';
  body?: string;
  contentType?: string;
}

/** A stream that starts normally and then sends `event: error` (e.g. `overloaded_error`). */
export interface FakeStreamError {
  kind: 'stream_error';
  type: string;
  message: string;
  /** SSE events of `message` sent before the error; default 1 (message_start). */
  afterEvents?: number;
  /** The message whose first events are sent; default: one text block. */
  partial?: Omit<FakeMessage, 'kind'>;
}

export type FakeBehaviour = FakeMessage | FakeError | FakeReset | FakeHang | FakeMalformed | FakeStreamError;

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body (or the raw text when it is not JSON). Loosely typed so tests can reach into it. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** `Date.now()` when the request arrived: lets tests measure retry backoff. */
  receivedAt: number;
  /** `Date.now()` when the connection closed or the response ended (e.g. the client aborted a hang). */
  closedAt?: number;
}

export interface FakeAnthropic {
  /** Base URL for the SDK (`baseURL`), e.g. `http://127.0.0.1:41234`. */
  url: string;
  requests: RecordedRequest[];
  enqueue(...behaviours: FakeBehaviour[]): void;
  /** Behaviours not yet consumed. */
  pending(): number;
  close(): Promise<void>;
}

// ---- builders -------------------------------------------------------------------------------

export function message(
  content: FakeMessage['content'] | string,
  options: Omit<FakeMessage, 'kind' | 'content'> = {},
): FakeMessage {
  const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const hasToolUse = blocks.some((b) => b.type === 'tool_use');
  return { kind: 'message', content: blocks, stop_reason: hasToolUse ? 'tool_use' : 'end_turn', ...options };
}

export function apiError(
  status: number,
  type: string,
  text: string,
  options: Omit<FakeError, 'kind' | 'status' | 'type' | 'message'> = {},
): FakeError {
  return { kind: 'error', status, type, message: text, ...options };
}

// ---- server ---------------------------------------------------------------------------------

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const queue: FakeBehaviour[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  let counter = 0;

  const server = http.createServer((req, res) => {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // keep the raw text
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers, body, receivedAt };
      requests.push(recorded);
      res.once('close', () => (recorded.closedAt = Date.now()));
      counter += 1;
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/messages') {
        sendError(
          res,
          404,
          'not_found_error',
          `fake-anthropic: no route for ${req.method} ${req.url}`,
          {},
          `req_fake_${counter}`,
        );
        return;
      }
      // As the real API: a body whose JSON holds a lone UTF-16 surrogate (`\ud800` with no low half) is refused.
      if (holdsLoneSurrogate(body)) {
        sendError(
          res,
          400,
          'invalid_request_error',
          'The request body is not valid JSON: no low surrogate in string',
          {},
          `req_fake_${counter}`,
        );
        return;
      }
      const behaviour = queue.shift();
      const fields = typeof body === 'object' && body !== null ? (body as { stream?: unknown; model?: unknown }) : {};
      const stream = fields.stream === true;
      const model = typeof fields.model === 'string' ? fields.model : 'unknown';
      void respond(req, res, behaviour, { stream, model, n: counter }).catch(() => res.destroy());
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
    requests,
    enqueue: (...behaviours) => {
      queue.push(...behaviours);
    },
    pending: () => queue.length,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string')
    return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => holdsLoneSurrogate(key) || holdsLoneSurrogate(item));
}

interface RequestInfo {
  stream: boolean;
  model: string;
  n: number;
}

async function respond(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  behaviour: FakeBehaviour | undefined,
  info: RequestInfo,
): Promise<void> {
  const requestId = `req_fake_${info.n}`;
  if (!behaviour) {
    sendError(res, 500, 'api_error', 'fake-anthropic: no response queued', {}, requestId);
    return;
  }
  switch (behaviour.kind) {
    case 'message': {
      if (!info.stream) {
        sendJson(res, 200, buildMessage(behaviour, info), behaviour.headers, behaviour.requestId ?? requestId);
        return;
      }
      await sendStream(res, behaviour, info, behaviour.requestId ?? requestId);
      return;
    }
    case 'error': {
      const error: Record<string, unknown> = { type: behaviour.type, message: behaviour.message };
      if (behaviour.errorCode) error.details = { error_code: behaviour.errorCode };
      sendJson(res, behaviour.status, { type: 'error', error }, behaviour.headers, behaviour.requestId ?? requestId);
      return;
    }
    case 'reset': {
      if (behaviour.afterEvents === undefined) {
        res.socket?.destroy();
        return;
      }
      const events = sseEvents({ content: [], ...behaviour.message }, info);
      startSse(res, {}, requestId);
      for (const event of events.slice(0, behaviour.afterEvents)) res.write(event);
      // Let the events reach the client before the socket dies.
      await delay(20);
      res.socket?.destroy();
      return;
    }
    case 'hang': {
      if (behaviour.afterEvents !== undefined) {
        const events = sseEvents({ content: [], ...behaviour.message }, info);
        startSse(res, {}, requestId);
        for (const event of events.slice(0, behaviour.afterEvents)) res.write(event);
      }
      // Hold the response open until the client aborts (or the server closes).
      await new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      return;
    }
    case 'malformed': {
      const contentType = behaviour.contentType ?? (info.stream ? 'text/event-stream' : 'application/json');
      const body =
        behaviour.body ??
        (info.stream
          ? 'event: message_start\ndata: {"type":"message_start","message":{not json\n\n'
          : '{"id": "msg_1", not json');
      res.writeHead(200, { 'content-type': contentType, 'request-id': requestId });
      res.end(body);
      return;
    }
    case 'stream_error': {
      const events = sseEvents({ content: [{ type: 'text', text: 'partial answer' }], ...behaviour.partial }, info);
      startSse(res, {}, requestId);
      for (const event of events.slice(0, behaviour.afterEvents ?? 1)) res.write(event);
      res.write(sse('error', { type: 'error', error: { type: behaviour.type, message: behaviour.message } }));
      res.end();
      return;
    }
  }
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> | undefined,
  requestId: string,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': requestId,
    ...headers,
  });
  res.end(text);
}

function sendError(
  res: http.ServerResponse,
  status: number,
  type: string,
  text: string,
  headers: Record<string, string>,
  requestId: string,
): void {
  sendJson(res, status, { type: 'error', error: { type, message: text } }, headers, requestId);
}

function startSse(res: http.ServerResponse, headers: Record<string, string> | undefined, requestId: string): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': requestId,
    ...headers,
  });
  // Push the headers out now so the client sees the response start even if no event follows.
  res.flushHeaders();
}

async function sendStream(
  res: http.ServerResponse,
  m: FakeMessage,
  info: RequestInfo,
  requestId: string,
): Promise<void> {
  startSse(res, m.headers, requestId);
  const gap = m.eventDelayMs ?? 0;
  for (let i = 0; i < (m.pings ?? 0); i++) {
    // The client went away (or the fake closed): stop, so no timer outlives the test.
    if (res.destroyed) return;
    res.write(sse('ping', { type: 'ping' }));
    if (gap) await delay(gap);
  }
  for (const event of sseEvents(m, info)) {
    if (res.destroyed) return;
    res.write(event);
    if (gap) await delay(gap);
  }
  res.end();
}

function usageOf(m: Omit<FakeMessage, 'kind'>): Required<FakeUsage> {
  return {
    input_tokens: m.usage?.input_tokens ?? 10,
    output_tokens: m.usage?.output_tokens ?? 5,
    cache_read_input_tokens: m.usage?.cache_read_input_tokens ?? null,
    cache_creation_input_tokens: m.usage?.cache_creation_input_tokens ?? null,
  };
}

function buildMessage(m: Omit<FakeMessage, 'kind'>, info: RequestInfo): Record<string, unknown> {
  return {
    id: m.id ?? `msg_fake_${info.n}`,
    type: 'message',
    role: 'assistant',
    model: m.model ?? info.model,
    content: m.content,
    stop_reason: m.stop_reason ?? 'end_turn',
    stop_sequence: null,
    usage: usageOf(m),
  };
}

/** The SSE events the real API sends for this message, in order. */
function sseEvents(m: Omit<FakeMessage, 'kind'>, info: RequestInfo): string[] {
  const usage = usageOf(m);
  const events: string[] = [];
  events.push(
    sse('message_start', {
      type: 'message_start',
      message: {
        ...buildMessage(m, info),
        content: [],
        stop_reason: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
  );
  m.content.forEach((block, index) => {
    switch (block.type) {
      case 'text': {
        const text = String(block.text ?? '');
        events.push(
          sse('content_block_start', { type: 'content_block_start', index, content_block: { ...block, text: '' } }),
        );
        for (const piece of split(text)) {
          events.push(
            sse('content_block_delta', {
              type: 'content_block_delta',
              index,
              delta: { type: 'text_delta', text: piece },
            }),
          );
        }
        break;
      }
      case 'tool_use':
      case 'server_tool_use': {
        // `input_json`: the input as raw JSON text, for values JSON.stringify cannot write (20,000 levels deep).
        const { input_json: rawJson, ...started } = block as typeof block & { input_json?: string };
        const json = rawJson ?? JSON.stringify(block.input ?? {});
        events.push(
          sse('content_block_start', { type: 'content_block_start', index, content_block: { ...started, input: {} } }),
        );
        for (const piece of split(json)) {
          events.push(
            sse('content_block_delta', {
              type: 'content_block_delta',
              index,
              delta: { type: 'input_json_delta', partial_json: piece },
            }),
          );
        }
        break;
      }
      case 'thinking': {
        events.push(
          sse('content_block_start', {
            type: 'content_block_start',
            index,
            content_block: { ...block, thinking: '', signature: '' },
          }),
        );
        for (const piece of split(String(block.thinking ?? ''))) {
          events.push(
            sse('content_block_delta', {
              type: 'content_block_delta',
              index,
              delta: { type: 'thinking_delta', thinking: piece },
            }),
          );
        }
        events.push(
          sse('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'signature_delta', signature: String(block.signature ?? '') },
          }),
        );
        break;
      }
      default:
        events.push(sse('content_block_start', { type: 'content_block_start', index, content_block: block }));
    }
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  });
  events.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: m.stop_reason ?? 'end_turn', stop_sequence: null },
      usage: {
        output_tokens: usage.output_tokens,
        input_tokens: usage.input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
      },
    }),
  );
  events.push(sse('message_stop', { type: 'message_stop' }));
  return events;
}

/** Split into two or three pieces so tests prove the client assembles deltas. */
function split(text: string): string[] {
  if (text.length < 2) return [text];
  const a = Math.floor(text.length / 3) || 1;
  const b = Math.floor((2 * text.length) / 3) || 2;
  return [text.slice(0, a), text.slice(a, b), text.slice(b)].filter((p) => p.length > 0);
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
