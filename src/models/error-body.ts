/**
 * A provider's error response is read with a bound. The SDKs read an error body whole and put it
 * in the error's message; a hostile or broken server's 3 MB `400` body then made a failure too
 * large for Temporal to record (with its stack, past the gRPC message limit), so the worker could
 * not report it and a non-retryable error turned into heartbeat-timeout retries. Only the first
 * MAX_ERROR_BODY_BYTES of an error body are read (the rest is dropped unread), and every failure
 * message is cut to MAX_ERROR_MESSAGE_CHARS before it reaches Temporal (`errors.ts`,
 * `openai-errors.ts`).
 */

/** How much of an error response's body is read: plenty for any real API error. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** How long a model failure's message may be: it is recorded in history and shown in results. */
export const MAX_ERROR_MESSAGE_CHARS = 2_000;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * `inner` (default: the global fetch), except that the body of a response that is not `ok` is
 * read only up to `maxBytes` and the connection's remaining bytes are discarded. Successful
 * responses pass through untouched (they stream).
 */
export function boundedErrorFetch(inner: Fetch = fetch, maxBytes = MAX_ERROR_BODY_BYTES): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.ok || !response.body) return response;
    const body = await readAtMost(response.body, maxBytes);
    const headers = new Headers(response.headers);
    // The body is now what was read, decoded: the length and encoding of the original no longer apply.
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  };
}

/** The first `maxBytes` bytes of `stream`; the rest is cancelled, never read. */
async function readAtMost(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - length;
      const part = value.byteLength > room ? value.subarray(0, room) : value;
      chunks.push(part);
      length += part.byteLength;
    }
  } catch {
    // A body that breaks while being read: what arrived is the error text.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** `message` cut to MAX_ERROR_MESSAGE_CHARS, marked where it was cut. */
export function boundedMessage(message: string): string {
  return message.length > MAX_ERROR_MESSAGE_CHARS ? `${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}…` : message;
}
