import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local fake of the Anthropic Messages API that enforces a key's rate limits as Anthropic documents
 * them: a token bucket per limit (input tokens per minute, requests per minute) of capacity `limit`,
 * refilled continuously at `limit` per minute; a request that finds less than it needs is answered 429
 * `rate_limit_error` with `retry-after` (whole seconds until enough has refilled); every answer carries
 * `anthropic-ratelimit-{requests,input-tokens}-{limit,remaining,reset}`. A request's input tokens are its
 * system, messages and tools at `charsPerToken` characters a token (3 by default: not the worker's
 * first guess of 4, so the worker's calibration matters).
 *
 * The agent it plays: each run calls the tool `toolName` until its conversation holds `iterations - 1`
 * answers, then answers with text; each answer streams after `answerMs`.
 */
export interface RateLimitedProviderOptions {
  inputTokensPerMinute: number;
  requestsPerMinute: number;
  iterations: number;
  toolName: string;
  toolInput: Record<string, unknown>;
  answerMs: number;
  charsPerToken?: number;
  /** Send the rate-limit headers (default true); without them only 429s tell. */
  headers?: boolean;
}

export interface ProviderRequest {
  at: number;
  status: number;
  inputTokens: number;
  /** The run's id, from the first user message (the bench's prompts start with it). */
  run: string;
}

export interface RateLimitedProvider {
  url: string;
  requests: ProviderRequest[];
  /** Change the limits from now on (a key's limit lowered mid-run). */
  setLimits(limits: { inputTokensPerMinute?: number; requestsPerMinute?: number }): void;
  close(): Promise<void>;
}

class Bucket {
  private level: number;
  private at = performance.now();
  constructor(public limit: number) {
    this.level = limit;
  }
  now(): number {
    const t = performance.now();
    this.level = Math.min(this.limit, this.level + (this.limit * (t - this.at)) / 60_000);
    this.at = t;
    return this.level;
  }
  take(n: number): void {
    this.level -= n;
  }
  /** ms until `n` are there. */
  waitFor(n: number): number {
    return Math.max(0, ((Math.min(n, this.limit) - this.now()) * 60_000) / this.limit);
  }
  /** Anthropic's reset: when the bucket is full again (RFC 3339). */
  resetAt(): string {
    return new Date(Date.now() + ((this.limit - this.now()) * 60_000) / this.limit).toISOString();
  }
  setLimit(limit: number): void {
    this.now();
    this.limit = limit;
    this.level = Math.min(this.level, limit);
  }
}

export async function startRateLimitedProvider(o: RateLimitedProviderOptions): Promise<RateLimitedProvider> {
  const tokens = new Bucket(o.inputTokensPerMinute);
  const requests = new Bucket(o.requestsPerMinute);
  const log: ProviderRequest[] = [];
  const charsPerToken = o.charsPerToken ?? 3;
  let n = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad json' } }));
        return;
      }
      const input = Math.ceil(
        ((typeof body.system === 'string' ? body.system.length : JSON.stringify(body.system ?? '').length) +
          JSON.stringify(body.messages ?? []).length +
          JSON.stringify(body.tools ?? []).length) /
          charsPerToken,
      );
      const run = runOf(body);
      const okTokens = tokens.now() >= input;
      const okRequests = requests.now() >= 1;
      const limitHeaders = (): Record<string, string> =>
        o.headers === false
          ? {}
          : {
              'anthropic-ratelimit-requests-limit': String(requests.limit),
              'anthropic-ratelimit-requests-remaining': String(Math.max(0, Math.floor(requests.now()))),
              'anthropic-ratelimit-requests-reset': requests.resetAt(),
              'anthropic-ratelimit-input-tokens-limit': String(tokens.limit),
              'anthropic-ratelimit-input-tokens-remaining': String(Math.max(0, Math.floor(tokens.now()))),
              'anthropic-ratelimit-input-tokens-reset': tokens.resetAt(),
            };
      if (!okTokens || !okRequests) {
        log.push({ at: Date.now(), status: 429, inputTokens: input, run });
        const wait = Math.max(okTokens ? 0 : tokens.waitFor(input), okRequests ? 0 : requests.waitFor(1));
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': String(Math.max(1, Math.ceil(wait / 1000))),
          ...limitHeaders(),
        });
        res.end(
          JSON.stringify({
            type: 'error',
            error: {
              type: 'rate_limit_error',
              message: `This request would exceed your organization's rate limit of ${okTokens ? `${requests.limit} requests` : `${tokens.limit} input tokens`} per minute.`,
            },
          }),
        );
        return;
      }
      tokens.take(input);
      requests.take(1);
      log.push({ at: Date.now(), status: 200, inputTokens: input, run });
      const answers = (body.messages ?? []).filter((m: { role?: string }) => m.role === 'assistant').length;
      const id = ++n;
      type Block =
        { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } | { type: 'text'; text: string };
      const content: Block[] =
        answers + 1 < o.iterations
          ? [{ type: 'tool_use', id: `toolu_${id}`, name: o.toolName, input: o.toolInput }]
          : [{ type: 'text', text: `done after ${answers + 1} calls` }];
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'request-id': `req_rl_${id}`,
        ...limitHeaders(),
      });
      res.flushHeaders();
      setTimeout(() => {
        if (res.destroyed) return;
        const usage = { input_tokens: input, output_tokens: 20 };
        const message = {
          id: `msg_rl_${id}`,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        };
        const block = content[0]!;
        const events = [
          sse('message_start', { type: 'message_start', message }),
          sse('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} },
          }),
          sse('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta:
              block.type === 'text'
                ? { type: 'text_delta', text: block.text }
                : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
          }),
          sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
          sse('message_delta', {
            type: 'message_delta',
            delta: { stop_reason: block.type === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null },
            usage,
          }),
          sse('message_stop', { type: 'message_stop' }),
        ];
        res.end(events.join(''));
      }, o.answerMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: log,
    setLimits(limits) {
      if (limits.inputTokensPerMinute !== undefined) tokens.setLimit(limits.inputTokensPerMinute);
      if (limits.requestsPerMinute !== undefined) requests.setLimit(limits.requestsPerMinute);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The bench's prompts start with `run <id>:`; the first user message names the run. */
function runOf(body: { messages?: Array<{ role?: string; content?: unknown }> }): string {
  const first = body.messages?.[0]?.content;
  const text =
    typeof first === 'string'
      ? first
      : Array.isArray(first)
        ? String((first[0] as { text?: unknown } | undefined)?.text ?? '')
        : '';
  return /^run ([\w.-]+):/.exec(text)?.[1] ?? '';
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
