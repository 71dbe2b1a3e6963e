/**
 * The model of the chaos test: a fake Anthropic Messages API (node:http) that plays a fixed script
 * per run, whatever order requests arrive in, and records every request so that repeated model calls
 * can be counted afterwards.
 *
 * Each request is identified by its run (`chaos-run-<n>` in the prompt) and its turn (1 + the number
 * of assistant messages it sends). Every response carries a serial (`(response #S)` in its text), and
 * the workflow keeps the assistant message exactly as returned, so later requests and the run's
 * final text show which response of each turn the run ACCEPTED (recorded in its history).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChaosCall {
  run: string;
  turn: number;
  serial: number;
  arrivedAt: number;
  /** When the whole response was handed to the socket; undefined when the client went away first. */
  completedAt?: number;
  /** The request body's messages (what the worker sent). */
  messages: Array<{ role: string; content: unknown }>;
}

export type ToolCall = { name: string; input: Record<string, unknown> };

export interface ChaosModel {
  url: string;
  calls: ChaosCall[];
  close(): Promise<void>;
}

export interface ChaosModelOptions {
  /** The tool call of `turn` (1-based) for `run`, or undefined: end the run with text. */
  script(run: string, turn: number): ToolCall | undefined;
  /** Time before the answer starts (pings are sent meanwhile, as a slow model's stream would). */
  latencyMs(): number;
}

export async function startChaosModel(options: ChaosModelOptions): Promise<ChaosModel> {
  const calls: ChaosCall[] = [];
  let serial = 0;
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: { messages?: ChaosCall['messages']; model?: string; stream?: boolean };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const messages = body.messages ?? [];
      const run = /chaos-run-\d+/.exec(JSON.stringify(messages[0] ?? ''))?.[0] ?? 'unknown';
      const turn = messages.filter((m) => m.role === 'assistant').length + 1;
      const call: ChaosCall = { run, turn, serial: ++serial, arrivedAt: Date.now(), messages };
      calls.push(call);
      const tool = options.script(run, turn);
      const text = `${run} turn ${turn} (response #${call.serial})`;
      const content = tool
        ? [
            { type: 'text', text },
            { type: 'tool_use', id: `toolu_${call.serial}`, name: tool.name, input: tool.input },
          ]
        : [{ type: 'text', text: `${text}: done` }];
      void answer(res, body.model ?? 'claude-sonnet-5-5', call, content, tool ? 'tool_use' : 'end_turn', options);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function answer(
  res: http.ServerResponse,
  model: string,
  call: ChaosCall,
  content: Array<Record<string, unknown>>,
  stopReason: string,
  options: ChaosModelOptions,
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': `req_chaos_${call.serial}` });
  res.flushHeaders();
  const deadline = Date.now() + options.latencyMs();
  while (Date.now() < deadline && !res.destroyed) {
    res.write(sse('ping', { type: 'ping' }));
    await new Promise((r) => setTimeout(r, Math.min(200, Math.max(0, deadline - Date.now()))));
  }
  if (res.destroyed) return;
  const usage = { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const message = { id: `msg_chaos_${call.serial}`, type: 'message', role: 'assistant', model, stop_sequence: null };
  res.write(
    sse('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage } }),
  );
  content.forEach((block, index) => {
    if (block.type === 'text') {
      res.write(
        sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
      );
      res.write(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text },
        }),
      );
    } else {
      res.write(
        sse('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }),
      );
      const json = JSON.stringify(block.input);
      res.write(
        sse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json },
        }),
      );
    }
    res.write(sse('content_block_stop', { type: 'content_block_stop', index }));
  });
  res.write(
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage }),
  );
  res.write(sse('message_stop', { type: 'message_stop' }));
  res.once('finish', () => (call.completedAt = Date.now()));
  res.end();
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The serial a response's text carries. */
export function serialOf(text: string): number | undefined {
  const match = /\(response #(\d+)\)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/**
 * Which response of each turn each run accepted, read from the conversations later requests sent
 * (assistant message k is turn k's accepted answer) and from the final texts. Throws when two
 * requests disagree about an earlier turn: a conversation that changed under the run.
 */
export function acceptedSerials(calls: ChaosCall[], finalTexts: Map<string, string>): Map<string, number> {
  const accepted = new Map<string, number>();
  const note = (run: string, turn: number, serial: number | undefined) => {
    if (serial === undefined) return;
    const key = `${run}/${turn}`;
    const seen = accepted.get(key);
    if (seen !== undefined && seen !== serial) {
      throw new Error(`${key}: later requests carry two different answers (#${seen} and #${serial})`);
    }
    accepted.set(key, serial);
  };
  for (const call of calls) {
    let turn = 0;
    for (const m of call.messages) {
      if (m.role !== 'assistant') continue;
      turn += 1;
      note(call.run, turn, serialOf(JSON.stringify(m.content)));
    }
  }
  for (const [run, text] of finalTexts) {
    const serial = serialOf(text);
    const call = calls.find((c) => c.serial === serial);
    if (call) note(run, call.turn, serial);
  }
  return accepted;
}

/** The tool_result blocks of a request's last message, by tool_use_id. */
export function toolResults(call: ChaosCall): Map<string, { is_error?: boolean; text: string }> {
  const last = call.messages[call.messages.length - 1];
  const found = new Map<string, { is_error?: boolean; text: string }>();
  if (!last || !Array.isArray(last.content)) return found;
  for (const block of last.content as Array<Record<string, unknown>>) {
    if (block.type !== 'tool_result') continue;
    const content = block.content;
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content.map((c: { text?: string }) => c.text ?? '').join('')
          : '';
    found.set(String(block.tool_use_id), { is_error: block.is_error === true, text });
  }
  return found;
}
