/**
 * Every read from a Streamable HTTP server, bounded (docs/mcp.md, "Bounds"): the `fetch` the SDK's
 * transport is given wraps each answer's body so that one message (an event of an event stream,
 * or a JSON body) and one answer (a POST's whole body) stay within their limits, and says when a
 * POST's body ended, so that a call whose server went away mid-answer ends instead of waiting.
 * Without it the SDK buffers one event-stream line without end, and a request whose stream closed
 * before its answer stays pending until its timeout.
 */

/** One MCP message as received (a stdio line, an event of an event stream, a JSON body): the SDK's stdio bound. */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024;
/** One HTTP answer's whole body (a POST's event stream: progress notifications, then the result). */
export const MAX_MCP_ANSWER_BYTES = 32 * 1024 * 1024;

const MIB = 1024 * 1024;
/** Statuses whose responses have no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A read over one of the bounds above. */
export class McpReadBoundError extends Error {}

export type JsonRpcId = string | number;

/**
 * Told when a POST's body ends: `ids` are the JSON-RPC requests it carried; `failure` says why it
 * broke off (a bound, the connection), undefined when it ended normally.
 */
export type BodyEnd = (ids: readonly JsonRpcId[], failure: { message: string; bound: boolean } | undefined) => void;

/** A `fetch` for the SDK's Streamable HTTP transport with every answer's body bounded. */
export function boundedFetch(onBodyEnd: BodyEnd, base: typeof fetch = fetch): typeof fetch {
  return async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const response = await base(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const post = (init?.method ?? 'GET').toUpperCase() === 'POST';
    const ids = post ? requestIds(init?.body) : [];
    const eventStream = /^\s*text\/event-stream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');
    const limits = eventStream
      ? { total: post ? MAX_MCP_ANSWER_BYTES : Infinity, event: MAX_MCP_MESSAGE_BYTES }
      : { total: MAX_MCP_MESSAGE_BYTES, event: Infinity };
    const body = boundedBody(response.body, limits, (failure) => {
      if (ids.length) onBodyEnd(ids, failure);
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The ids of the JSON-RPC requests in a POST's body (a message or a batch). */
function requestIds(body: unknown): JsonRpcId[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed]).flatMap((m) => {
      const msg = (typeof m === 'object' && m !== null ? m : {}) as { method?: unknown; id?: unknown };
      return typeof msg.method === 'string' && (typeof msg.id === 'string' || typeof msg.id === 'number')
        ? [msg.id]
        : [];
    });
  } catch {
    return [];
  }
}

/** `source` passed on chunk by chunk, failing (and letting go of the connection) at the first bound crossed. */
function boundedBody(
  source: ReadableStream<Uint8Array>,
  limits: { total: number; event: number },
  onEnd: (failure: { message: string; bound: boolean } | undefined) => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  const events = new EventBytes();
  let total = 0;
  let ended = false;
  const end = (failure?: { message: string; bound: boolean }) => {
    if (ended) return;
    ended = true;
    onEnd(failure);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          end();
          return;
        }
        total += value.byteLength;
        if (total > limits.total) {
          const what = limits.total === MAX_MCP_MESSAGE_BYTES ? 'message' : 'answer';
          throw new McpReadBoundError(
            `the server's answer is over ${limits.total / MIB} MiB, the limit of one MCP ${what}; it was not read further`,
          );
        }
        if (events.add(value) > limits.event) {
          throw new McpReadBoundError(
            `the server sent a message over ${limits.event / MIB} MiB, the limit of one MCP message ` +
              '(an image or file over about 7.5 MB, base64 in one message, is over it); it was not read further',
          );
        }
        controller.enqueue(value);
      } catch (err) {
        const bound = err instanceof McpReadBoundError;
        const message = bound ? err.message : `the server's answer broke off (${(err as Error).message})`;
        reader.cancel(message).catch(() => undefined);
        controller.error(bound ? err : new Error(message));
        end({ message, bound });
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/**
 * Bytes of the current event of an event stream: since the last blank line (an event's end). The
 * SDK's parser keeps an event's lines until it ends, so this bounds what it holds. A line of at
 * most one byte (`\r` of a CRLF blank line) counts as blank: no field the parser keeps is that short.
 */
class EventBytes {
  private bytes = 0;
  private line = 0;

  /** Adds a chunk; returns the most the current event held while it was read. */
  add(chunk: Uint8Array): number {
    let peak = 0;
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.line += nl - start;
      this.bytes += nl - start + 1;
      peak = Math.max(peak, this.bytes);
      if (this.line <= 1) this.bytes = 0;
      this.line = 0;
      start = nl + 1;
    }
    this.line += chunk.length - start;
    this.bytes += chunk.length - start;
    return Math.max(peak, this.bytes);
  }
}
