/**
 * The soak's fake Messages API: a deterministic agent that many runs talk to at once, with random
 * transient faults. Unlike test/support/fake-anthropic.ts (a queue of canned answers for one run)
 * each answer is a pure function of the conversation in the request, so retries, resends and
 * concurrent runs need no coordination, and a response is the same whichever worker asks.
 *
 * The agent of run R with S steps: bash step 0 … S-1 (each appends `start R i <worker> <ms>` and
 * `end …` lines to effects.log in the run's workspace, sleeping in between), then read_file
 * effects.log, then the answer `soak R: S steps done`. When a step's result is an error (the
 * outcome-unknown result after a lost worker, a cancellation), it reads effects.log and re-issues
 * the step only if the step's `start` line is not there, as a careful model would.
 *
 * Workers reach it at `<url>/w/<worker-id>` (their ANTHROPIC_BASE_URL), so every request records
 * which worker made it. Every request is recorded with its timing and outcome.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAULT_KINDS = [
  '429',
  '529',
  '500',
  '503',
  'reset',
  'reset_mid_stream',
  'malformed',
  'stream_error',
  'hang',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ApiRequest {
  seq: number;
  /** The worker identity from the URL path. */
  worker: string;
  run: string;
  /** Model turn: 1 for the first call of a run, k for a request carrying 2k-1 messages. */
  turn: number;
  receivedAt: number;
  outcome: 'ok' | FaultKind | 'unparseable';
  /** The message id of an `ok` response (what the run's history records when the call completes). */
  messageId?: string;
  /** When an `ok` response was fully written. */
  finishedAt?: number;
  closedAt?: number;
}

export interface SoakApiOptions {
  steps: number;
  /** Probability that a request gets a transient fault instead of an answer. */
  faultRate: number;
  random: () => number;
  /** Pause between SSE events of an answer (ms); a call takes ~10 events. */
  eventDelayMs?: number;
}

export interface SoakApi {
  url: string;
  requests: ApiRequest[];
  close(): Promise<void>;
}

export const expectedAnswer = (run: string, steps: number) => `soak ${run}: ${steps} steps done`;

/** The shell command of step `i`: its `start` line is the side effect the soak counts. */
export function stepCommand(run: string, i: number, sleepMs: number): string {
  const stamp = '$DA_WORKER_ID $(date +%s%3N)';
  return (
    `echo "start ${run} ${i} ${stamp}" >> effects.log; sleep ${(sleepMs / 1000).toFixed(2)}; ` +
    `echo "end ${run} ${i} ${stamp}" >> effects.log`
  );
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };
interface Answer {
  content: Block[];
  stopReason: 'tool_use' | 'end_turn';
}
interface Msg {
  role: string;
  content: unknown;
}

/** The next turn of run `run`'s agent, from the conversation so far. */
export function decide(run: string, messages: Msg[], steps: number): Answer {
  const turn = messages.filter((m) => m.role === 'assistant').length;
  const id = (what: string) => `toolu_${run.replace(/[^A-Za-z0-9]/g, '')}_${what}_${turn}`;
  // Per-step sleep derived from the run and step, so a retried call answers the same.
  const bash = (i: number): Answer => ({
    content: [
      {
        type: 'tool_use',
        id: id(`s${i}`),
        name: 'bash',
        input: { command: stepCommand(run, i, 200 + (hash(`${run}/${i}`) % 800)) },
      },
    ],
    stopReason: 'tool_use',
  });
  const read = (what: string): Answer => ({
    content: [{ type: 'tool_use', id: id(what), name: 'read_file', input: { path: 'effects.log' } }],
    stopReason: 'tool_use',
  });
  const next = (i: number): Answer => (i < steps ? bash(i) : read('f'));
  const answer = (text: string): Answer => ({ content: [{ type: 'text', text }], stopReason: 'end_turn' });

  const assistant = [...messages].reverse().find((m) => m.role === 'assistant');
  if (!assistant) return bash(0);
  const use = blocks(assistant.content).find((b) => b.type === 'tool_use') as { id?: string } | undefined;
  const last = messages[messages.length - 1];
  const result = blocks(last?.content).find((b) => b.type === 'tool_result' && b.tool_use_id === use?.id) as
    { content?: unknown; is_error?: boolean } | undefined;
  const match = /_(s|c|f)(\d*)_\d+$/.exec(use?.id ?? '');
  if (!match || !result) return answer(`soak ${run}: lost track of the conversation`);
  const kind = match[1];
  const step = Number(match[2]);
  const text = textOf(result.content);
  switch (kind) {
    case 's':
      return result.is_error ? read(`c${step}`) : next(step + 1);
    case 'c':
      // No effects.log at all: no step ever started, this one included.
      if (result.is_error)
        return /does not exist|no such file|ENOENT|not found/i.test(text) ? bash(step) : read(`c${step}`);
      return text.includes(`start ${run} ${step} `) ? next(step + 1) : bash(step);
    default: {
      if (result.is_error) return read('f');
      const missing = Array.from({ length: steps }, (_, i) => i).filter((i) => !text.includes(`start ${run} ${i} `));
      return answer(missing.length ? `soak ${run}: steps ${missing.join(', ')} missing` : expectedAnswer(run, steps));
    }
  }
}

export async function startSoakApi(options: SoakApiOptions): Promise<SoakApi> {
  const requests: ApiRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();
  const delayMs = options.eventDelayMs ?? 40;
  let seq = 0;

  const server = http.createServer((req, res) => {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = ++seq;
      const worker = /^\/w\/([^/]+)\//.exec(req.url ?? '')?.[1] ?? 'unknown';
      let body: { messages?: Msg[]; model?: string } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // recorded as unparseable below
      }
      const messages = body.messages ?? [];
      const first = messages[0];
      const run = /soak run ([^\s:]+)/.exec(textOf(first?.content))?.[1] ?? 'unknown';
      const record: ApiRequest = {
        seq: n,
        worker,
        run,
        turn: (messages.length + 1) / 2,
        receivedAt,
        outcome: 'ok',
      };
      requests.push(record);
      res.once('close', () => (record.closedAt = Date.now()));
      if (run === 'unknown') {
        record.outcome = 'unparseable';
        sendJson(res, 400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'soak: not a soak run' },
        });
        return;
      }
      if (options.random() < options.faultRate) {
        const fault = FAULT_KINDS[Math.floor(options.random() * FAULT_KINDS.length)]!;
        record.outcome = fault;
        void sendFault(req, res, fault, n);
        return;
      }
      const answer = decide(run, messages, options.steps);
      record.messageId = `msg_soak_${n}`;
      void sendAnswer(res, answer, record.messageId, body.model ?? 'claude-sonnet-5-5', delayMs).then(
        () => (record.finishedAt = Date.now()),
        () => undefined,
      );
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
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function blocks(content: unknown): Array<Record<string, unknown>> {
  return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return blocks(content)
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join('');
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function startSse(res: http.ServerResponse, requestId: string) {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': requestId });
  res.flushHeaders();
}

function answerEvents(answer: Answer, id: string, model: string): string[] {
  const usage = { input_tokens: 100, output_tokens: 20 };
  const events = [
    sse('message_start', {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
  ];
  answer.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(
        sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
      );
      events.push(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text },
        }),
      );
    } else {
      events.push(
        sse('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }),
      );
      const json = JSON.stringify(block.input);
      const half = Math.floor(json.length / 2);
      for (const part of [json.slice(0, half), json.slice(half)]) {
        events.push(
          sse('content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: part },
          }),
        );
      }
    }
    events.push(sse('content_block_stop', { type: 'content_block_stop', index }));
  });
  events.push(
    sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: answer.stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  events.push(sse('message_stop', { type: 'message_stop' }));
  return events;
}

async function sendAnswer(res: http.ServerResponse, answer: Answer, id: string, model: string, delayMs: number) {
  startSse(res, `req_${id}`);
  res.write(sse('ping', { type: 'ping' }));
  for (const event of answerEvents(answer, id, model)) {
    await delay(delayMs);
    if (res.destroyed) throw new Error('client went away');
    res.write(event);
  }
  await new Promise<void>((resolve, reject) => res.end(() => (res.destroyed ? reject(new Error('gone')) : resolve())));
}

async function sendFault(req: http.IncomingMessage, res: http.ServerResponse, fault: FaultKind, n: number) {
  const error = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
    sendJson(res, status, { type: 'error', error: { type, message } }, { 'request-id': `req_fault_${n}`, ...headers });
  switch (fault) {
    case '429':
      return error(429, 'rate_limit_error', 'soak: rate limited', { 'retry-after': '1' });
    case '529':
      return error(529, 'overloaded_error', 'soak: overloaded');
    case '500':
      return error(500, 'api_error', 'soak: internal error');
    case '503':
      return error(503, 'api_error', 'soak: unavailable');
    case 'reset':
      res.socket?.destroy();
      return;
    case 'reset_mid_stream': {
      startSse(res, `req_fault_${n}`);
      const events = answerEvents(
        { content: [{ type: 'text', text: 'cut' }], stopReason: 'end_turn' },
        `msg_cut_${n}`,
        'x',
      );
      res.write(events.slice(0, 3).join(''));
      await delay(20);
      res.socket?.destroy();
      return;
    }
    case 'malformed':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('event: message_start\ndata: {"type":"message_start","message":{not json\n\n');
      return;
    case 'stream_error': {
      startSse(res, `req_fault_${n}`);
      const [start] = answerEvents({ content: [], stopReason: 'end_turn' }, `msg_err_${n}`, 'x');
      res.write(start);
      res.end(sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'soak: overloaded' } }));
      return;
    }
    case 'hang':
      // Headers, then nothing: the worker's idle timeout gives up on it.
      startSse(res, `req_fault_${n}`);
      await new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      return;
  }
}
