/**
 * A local fake of an OpenAI-compatible Chat Completions endpoint (`POST /v1/chat/completions`) for
 * tests: node:http, no deps.
 *
 * Each request takes the next queued behaviour: an answer (streamed as SSE chunks, usage last and
 * `data: [DONE]`, when the request asks for `stream: true`; else one JSON `chat.completion`), an
 * API error (with or without `retry-after`), a connection cut before or midway through the stream,
 * a stream that ends early without a finish reason, a hang, malformed chunks, or an error sent
 * inside the stream. Every request is recorded (headers + parsed body). With an empty queue the
 * fake answers 500 "fake-openai: no response queued", so a test that makes one call too many fails.
 *
 * Point the real SDK at it with `new OpenAI({ baseURL: fake.url, apiKey: 'x' })` or `OPENAI_BASE_URL`.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeToolCall {
  /** Default `call_fake_<request>_<i>`; `null` sends the call without an id (some local servers do). */
  id?: string | null;
  name: string;
  /** Sent as is when a string (so a test can send invalid JSON), else JSON-encoded. */
  arguments: string | Record<string, unknown>;
}

export interface FakeChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** A successful answer. Text, reasoning and tool arguments are streamed in pieces. */
export interface FakeAnswer {
  kind: 'answer';
  text?: string;
  /** Streamed as `delta[reasoningField]` before the text. */
  reasoning?: string;
  reasoningField?: 'reasoning_content' | 'reasoning';
  toolCalls?: FakeToolCall[];
  /** Default: `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** `null` sends no usage chunk. Default `{prompt_tokens: 10, completion_tokens: 5}`. */
  usage?: FakeChatUsage | null;
  id?: string;
  /** Defaults to the request's model. */
  model?: string;
  /** Sent as `x-request-id`. Defaults to `req_fake_<n>`. */
  requestId?: string;
  headers?: Record<string, string>;
  /** Pause between chunks (ms). */
  chunkDelayMs?: number;
  /** Characters per text/reasoning/argument piece. Default: each split in three. */
  pieceChars?: number;
  /** Number every parallel tool call with `index: 0`, as some servers do. */
  zeroIndexes?: boolean;
}

export interface FakeChatError {
  kind: 'error';
  status: number;
  message: string;
  type?: string;
  code?: string;
  headers?: Record<string, string>;
}

/** Destroy the socket: before any response, or after `afterChunks` chunks of `answer`. */
export interface FakeCut {
  kind: 'cut';
  afterChunks?: number;
  answer?: Omit<FakeAnswer, 'kind'>;
}

/** End the response cleanly after `afterChunks` chunks: no finish reason, no `[DONE]`. */
export interface FakeEndEarly {
  kind: 'end_early';
  afterChunks: number;
  answer?: Omit<FakeAnswer, 'kind'>;
}

/** Send `afterChunks` chunks (default none, headers only) then hold the response open until the client leaves. */
export interface FakeHangOpenAI {
  kind: 'hang';
  afterChunks?: number;
  answer?: Omit<FakeAnswer, 'kind'>;
}

/** A 200 stream whose data is not JSON (default), or any `body` as the whole response. */
export interface FakeMalformedChunk {
  kind: 'malformed';
  body?: string;
  contentType?: string;
}

/** `afterChunks` chunks, then a `data: {"error": …}` chunk, as OpenAI and vLLM send mid-stream. */
export interface FakeStreamErrorOpenAI {
  kind: 'stream_error';
  afterChunks?: number;
  type: string;
  message: string;
  code?: string;
}

export type FakeOpenAIBehaviour =
  FakeAnswer | FakeChatError | FakeCut | FakeEndEarly | FakeHangOpenAI | FakeMalformedChunk | FakeStreamErrorOpenAI;

export interface RecordedChatRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body. Loosely typed so tests can reach into it. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  receivedAt: number;
  /** When the connection closed or the response ended. */
  closedAt?: number;
}

export interface FakeOpenAI {
  /** Base URL for the SDK, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  requests: RecordedChatRequest[];
  enqueue(...behaviours: FakeOpenAIBehaviour[]): void;
  pending(): number;
  close(): Promise<void>;
}

/** An answer: text, or tool calls (`toolCalls` option). */
export function answer(text: string, options: Omit<FakeAnswer, 'kind' | 'text'> = {}): FakeAnswer {
  return { kind: 'answer', text, ...options };
}

/** An answer that calls tools (parallel when several). */
export function toolCalls(calls: FakeToolCall[], options: Omit<FakeAnswer, 'kind' | 'toolCalls'> = {}): FakeAnswer {
  return { kind: 'answer', toolCalls: calls, ...options };
}

export function chatError(
  status: number,
  message: string,
  options: Omit<FakeChatError, 'kind' | 'status' | 'message'> = {},
): FakeChatError {
  return { kind: 'error', status, message, ...options };
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: FakeOpenAIBehaviour[] = [];
  const requests: RecordedChatRequest[] = [];
  const sockets = new Set<Socket>();
  let counter = 0;

  const server = http.createServer((req, res) => {
    const receivedAt = Date.now();
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // keep the raw text
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
      const recorded: RecordedChatRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers,
        body,
        receivedAt,
      };
      requests.push(recorded);
      res.once('close', () => (recorded.closedAt = Date.now()));
      const n = ++counter;
      if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/chat/completions') {
        sendJson(res, 404, errorBody(`fake-openai: no route for ${req.method} ${req.url}`, 'invalid_request_error'));
        return;
      }
      const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
      const info: RequestInfo = {
        n,
        stream: fields.stream === true,
        model: typeof fields.model === 'string' ? fields.model : 'unknown',
        includeUsage: (fields.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
      };
      void respond(req, res, queue.shift(), info).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...behaviours) => void queue.push(...behaviours),
    pending: () => queue.length,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface RequestInfo {
  n: number;
  stream: boolean;
  model: string;
  includeUsage: boolean;
}

async function respond(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  behaviour: FakeOpenAIBehaviour | undefined,
  info: RequestInfo,
): Promise<void> {
  const requestId = `req_fake_${info.n}`;
  if (!behaviour) {
    sendJson(res, 500, errorBody('fake-openai: no response queued', 'server_error'), { 'x-request-id': requestId });
    return;
  }
  switch (behaviour.kind) {
    case 'answer': {
      const headers = { 'x-request-id': behaviour.requestId ?? requestId, ...behaviour.headers };
      if (!info.stream) return sendJson(res, 200, completion(behaviour, info), headers);
      startSse(res, headers);
      for (const chunk of streamChunks(behaviour, info)) {
        if (res.destroyed) return;
        res.write(chunk);
        if (behaviour.chunkDelayMs) await delay(behaviour.chunkDelayMs);
      }
      res.end();
      return;
    }
    case 'error': {
      const body = errorBody(behaviour.message, behaviour.type ?? 'invalid_request_error', behaviour.code);
      sendJson(res, behaviour.status, body, { 'x-request-id': requestId, ...behaviour.headers });
      return;
    }
    case 'cut':
    case 'end_early':
    case 'hang': {
      if (behaviour.kind === 'cut' && behaviour.afterChunks === undefined) {
        res.socket?.destroy();
        return;
      }
      startSse(res, { 'x-request-id': requestId });
      const chunks = streamChunks({ text: 'partial answer', ...behaviour.answer }, info);
      for (const chunk of chunks.slice(0, behaviour.afterChunks ?? 0)) res.write(chunk);
      if (behaviour.kind === 'end_early') return void res.end();
      if (behaviour.kind === 'hang') return new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      await delay(20); // let the chunks reach the client before the socket dies
      res.socket?.destroy();
      return;
    }
    case 'malformed': {
      const contentType = behaviour.contentType ?? 'text/event-stream';
      res.writeHead(200, { 'content-type': contentType, 'x-request-id': requestId });
      res.end(behaviour.body ?? 'data: {"id":"chatcmpl-1","choices":[{not json\n\n');
      return;
    }
    case 'stream_error': {
      startSse(res, { 'x-request-id': requestId });
      for (const chunk of streamChunks({ text: 'partial answer' }, info).slice(0, behaviour.afterChunks ?? 1)) {
        res.write(chunk);
      }
      res.write(data(errorBody(behaviour.message, behaviour.type, behaviour.code)));
      res.end();
      return;
    }
  }
}

function errorBody(message: string, type: string, code?: string): Record<string, unknown> {
  return { error: { message, type, param: null, code: code ?? null } };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function startSse(res: http.ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
}

function callId(a: Omit<FakeAnswer, 'kind'>, i: number, info: RequestInfo): string | undefined {
  const id = a.toolCalls?.[i]?.id;
  return id === null ? undefined : (id ?? `call_fake_${info.n}_${i}`);
}

function argumentsOf(call: FakeToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function finishOf(a: Omit<FakeAnswer, 'kind'>): string {
  return a.finishReason ?? (a.toolCalls?.length ? 'tool_calls' : 'stop');
}

function usageOf(a: Omit<FakeAnswer, 'kind'>): Record<string, unknown> | null {
  if (a.usage === null) return null;
  const u = a.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    ...(u.cached_tokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cached_tokens } } : {}),
  };
}

/** The non-streamed `chat.completion`. */
function completion(a: Omit<FakeAnswer, 'kind'>, info: RequestInfo): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: a.text ?? null };
  if (a.reasoning) message[a.reasoningField ?? 'reasoning_content'] = a.reasoning;
  if (a.toolCalls?.length) {
    message.tool_calls = a.toolCalls.map((call, i) => ({
      id: callId(a, i, info),
      type: 'function',
      function: { name: call.name, arguments: argumentsOf(call) },
    }));
  }
  const usage = usageOf(a);
  return {
    id: a.id ?? `chatcmpl-fake-${info.n}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: a.model ?? info.model,
    choices: [{ index: 0, message, finish_reason: finishOf(a), logprobs: null }],
    ...(usage ? { usage } : {}),
  };
}

/** The SSE lines a real server sends for this answer, `[DONE]` included. */
function streamChunks(a: Omit<FakeAnswer, 'kind'>, info: RequestInfo): string[] {
  const base = {
    id: a.id ?? `chatcmpl-fake-${info.n}`,
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: a.model ?? info.model,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    data({ ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] });
  const out = [chunk({ role: 'assistant', content: '' })];
  for (const piece of split(a.reasoning ?? '', a.pieceChars))
    out.push(chunk({ [a.reasoningField ?? 'reasoning_content']: piece }));
  for (const piece of split(a.text ?? '', a.pieceChars)) out.push(chunk({ content: piece }));
  (a.toolCalls ?? []).forEach((call, i) => {
    const index = a.zeroIndexes ? 0 : i;
    const id = callId(a, i, info);
    out.push(
      chunk({
        tool_calls: [{ index, ...(id ? { id } : {}), type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const piece of split(argumentsOf(call), a.pieceChars)) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, finishOf(a)));
  const usage = usageOf(a);
  if (usage && info.includeUsage) out.push(data({ ...base, choices: [], usage }));
  out.push('data: [DONE]\n\n');
  return out;
}

/** Pieces of `pieceChars`, or three pieces, so tests prove the client assembles deltas. */
function split(text: string, pieceChars?: number): string[] {
  if (!text) return [];
  if (pieceChars) {
    const pieces: string[] = [];
    for (let i = 0; i < text.length; i += pieceChars) pieces.push(text.slice(i, i + pieceChars));
    return pieces;
  }
  if (text.length < 3) return [text];
  const a = Math.floor(text.length / 3);
  const b = Math.floor((2 * text.length) / 3);
  return [text.slice(0, a), text.slice(a, b), text.slice(b)];
}

function data(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
