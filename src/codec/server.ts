import type { PayloadCodec } from '@temporalio/common';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AesGcmCodec } from './encryption-codec';
import type { CodecKeys } from './keys';
import { PayloadJsonError, payloadsFromJson, payloadsToJson } from './payload-json';

/** The port `durable-agent codec-server` listens on unless `--port` says otherwise (Temporal's Go samples use it too). */
export const DEFAULT_CODEC_SERVER_PORT = 8081;
/**
 * The Web UI origins `startCodecServer` allows when given none: the UI of a dev server on :7233, under
 * both names a browser may reach it by (an origin is the host as typed). `durable-agent codec-server`
 * passes the origins of the UI it is configured for instead (`codecUiOrigins`).
 */
export const DEFAULT_CODEC_CORS_ORIGINS: readonly string[] = ['http://localhost:8233', 'http://127.0.0.1:8233'];

/** Why `origin` cannot be a CORS origin of the codec server, or undefined when it can. */
export function corsOriginProblem(origin: string): string | undefined {
  const shown = JSON.stringify(origin.slice(0, 100));
  if (origin === '*' || origin === 'null') {
    return `${shown} would let any page decrypt: give the Web UI's origin, e.g. https://temporal-ui.example.com`;
  }
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `${shown} is not an origin: scheme://host[:port], e.g. http://127.0.0.1:8233`;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
    return `${shown} is not an origin: scheme://host[:port] (http or https, no path, no trailing slash), e.g. http://127.0.0.1:8233`;
  }
  return undefined;
}

/**
 * The origins a Web UI at `uiBase` (a URL; a path after the host is ignored) is reached by: its own
 * origin and, for a loopback UI, the same port under the other loopback name (`localhost` / `127.0.0.1`).
 */
export function codecUiOrigins(uiBase: string): string[] {
  let url: URL;
  try {
    url = new URL(uiBase);
  } catch {
    return [...DEFAULT_CODEC_CORS_ORIGINS];
  }
  const port = url.port ? `:${url.port}` : '';
  if (url.hostname === 'localhost' || url.hostname === '127.0.0.1') {
    return [`${url.protocol}//localhost${port}`, `${url.protocol}//127.0.0.1${port}`];
  }
  return [url.origin];
}
/**
 * Largest request body accepted. A payload may be up to 2 MiB (Temporal's limit), 2.7 MiB as base64,
 * and the UI sends an event's payloads in one request; more than this is not a codec request.
 */
export const MAX_CODEC_REQUEST_BYTES = 16 * 1024 * 1024;
/**
 * Most JSON objects and arrays a request body may hold (counted before it is parsed). Parsing
 * amplifies memory by object count, not bytes: 16 MiB of `{}` is millions of objects. A payload is
 * two objects (itself, its metadata), so this leaves room for thousands of payloads.
 */
export const MAX_CODEC_JSON_CONTAINERS = 50_000;
/**
 * Requests read and answered at once; more get 503 and `Retry-After`. Each may hold up to
 * MAX_CODEC_REQUEST_BYTES several times over while it is decoded and encoded, so this bounds the
 * server's memory whatever a client sends.
 */
export const MAX_CONCURRENT_CODEC_REQUESTS = 4;
/** Headers the Web UI and the CLI send: the namespace, the JSON body type, and an access token when passed on. */
const ALLOWED_HEADERS = 'X-Namespace, Content-Type, Authorization';

export interface CodecServerOptions {
  /** Default `DEFAULT_CODEC_SERVER_PORT`; 0 picks a free port. */
  port?: number;
  /** Default `127.0.0.1`: the server decrypts for anyone who reaches it. */
  host?: string;
  keys: CodecKeys;
  /** Origins whose pages may call the server (the Web UI's). Default `DEFAULT_CODEC_CORS_ORIGINS`. */
  corsOrigins?: readonly string[];
}

export interface CodecServer {
  /** `http://host:port`, what the Web UI's codec endpoint setting takes. */
  url: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Serves Temporal's remote codec protocol with the durable-agent codec: `POST /encode` and `POST
 * /decode` (also under a namespace segment, `/{namespace}/decode`, for the CLI's endpoint templating)
 * take and return `{"payloads": [...]}` in protobuf JSON. CORS lets the configured Web UI origins call
 * it (preflight included); other origins get 403. The keys are the same for every namespace, so the
 * `X-Namespace` header is accepted and not needed.
 */
export async function startCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const codec = new AesGcmCodec(options.keys);
  const origins = new Set(options.corsOrigins ?? DEFAULT_CODEC_CORS_ORIGINS);
  const host = options.host ?? '127.0.0.1';
  const busy = { requests: 0 };
  const server = createServer((req, res) => {
    handle(req, res, codec, origins, busy).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) sendJson(res, status, { error: message });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_CODEC_SERVER_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  codec: PayloadCodec,
  origins: ReadonlySet<string>,
  busy: { requests: number },
): Promise<void> {
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!origins.has(origin)) {
      throw new HttpError(403, `origin ${origin} is not allowed; allowed: ${[...origins].join(', ')}`);
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
  }
  res.setHeader('Vary', 'Origin');
  const path = new URL(req.url ?? '/', 'http://codec').pathname;
  const operation = /^(?:\/[^/]+)?\/(encode|decode)\/?$/.exec(path)?.[1];
  if (!operation) throw new HttpError(404, `no such endpoint ${path}; use POST /encode or POST /decode`);
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
    res.writeHead(204).end();
    return;
  }
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST, OPTIONS');
    throw new HttpError(405, `${path} takes POST, not ${req.method}`);
  }
  if (busy.requests >= MAX_CONCURRENT_CODEC_REQUESTS) {
    res.setHeader('Retry-After', '1');
    res.setHeader('Connection', 'close');
    req.resume();
    throw new HttpError(503, `busy: ${MAX_CONCURRENT_CODEC_REQUESTS} requests are being answered; retry in a second`);
  }
  busy.requests += 1;
  try {
    await answer(req, res, codec, operation);
  } finally {
    busy.requests -= 1;
  }
}

async function answer(req: IncomingMessage, res: ServerResponse, codec: PayloadCodec, operation: string) {
  const body = await readBody(req, res);
  const containers = countContainers(body);
  if (containers > MAX_CODEC_JSON_CONTAINERS) {
    throw new HttpError(
      400,
      `the body holds ${containers} JSON objects and arrays, more than ${MAX_CODEC_JSON_CONTAINERS}; send fewer payloads per request`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `the body is not JSON: ${(err as Error).message}`);
  }
  let payloads;
  try {
    payloads = payloadsFromJson(json);
  } catch (err) {
    if (err instanceof PayloadJsonError) throw new HttpError(400, err.message);
    throw err;
  }
  try {
    const result = operation === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
    sendJson(res, 200, payloadsToJson(result));
  } catch (err) {
    // A payload this codec cannot read (unknown key id, altered bytes) is the request's fault.
    throw new HttpError(400, (err as Error).message);
  }
}

/** `{` and `[` bytes in the body: an upper bound on the objects and arrays parsing it would make. */
function countContainers(body: Buffer): number {
  let count = 0;
  for (let i = body.indexOf(0x7b); i >= 0; i = body.indexOf(0x7b, i + 1)) count++;
  for (let i = body.indexOf(0x5b); i >= 0; i = body.indexOf(0x5b, i + 1)) count++;
  return count;
}

/**
 * The request body, up to `MAX_CODEC_REQUEST_BYTES`. A larger body is answered 413 at once; the rest
 * is drained unread (not buffered) so the client can read the answer, and the connection then closes.
 */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const tooLarge = () => {
      res.setHeader('Connection', 'close');
      req.removeListener('data', onData);
      req.resume();
      reject(new HttpError(413, `the body is larger than ${MAX_CODEC_REQUEST_BYTES} bytes`));
    };
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_CODEC_REQUEST_BYTES) tooLarge();
      else chunks.push(chunk);
    };
    if (Number(req.headers['content-length'] ?? 0) > MAX_CODEC_REQUEST_BYTES) return tooLarge();
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
