import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRun } from '../client';
import { SteerRefused } from '../cli/cli-errors';
import { UndecodablePayload } from '../client/transcript/history';
import { PACKAGE_VERSION } from '../version';
import { isAction, runAction } from './actions';
import { loadAssets } from './assets';
import { checkAccess, newToken, sessionCookie } from './auth';
import { buildRunView } from './build-view';
import { BadRequest, ReadOnly } from './errors';
import { LiveHub } from './live-hub';
import { listRunPage, parseRunListRequest } from './run-list';
import { readRunRecord } from './run-reader';
import { ViewCache } from './view-cache';

/**
 * The inspector's HTTP server (`durable-agent ui`): the page, its JSON API over the Temporal
 * client, live updates as server-sent events, and the actions. Every request needs the token.
 */

export const DEFAULT_INSPECTOR_HOST = '127.0.0.1';
/** An action's JSON body is at most this large (a `send` message is at most 128 KiB). */
const MAX_BODY_BYTES = 256 * 1024;

/** The page may run only its own scripts and styles, talk only to this server, and be framed by no one. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface InspectorOptions {
  client: Client;
  host?: string;
  /** 0 (default): a free port. */
  port?: number;
  readOnly?: boolean;
  /** Default: 32 random bytes. */
  token?: string;
  /** The run's page in the Temporal Web UI. */
  webUiLink(workflowId: string): string;
  /** How often live pages look at a run (default 500 ms, as `follow`). */
  followIntervalMs?: number;
}

export interface Inspector {
  /** The URL to open, with the token. */
  url: string;
  host: string;
  port: number;
  token: string;
  hub: LiveHub;
  cache: ViewCache;
  close(): Promise<void>;
}

export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const host = options.host ?? DEFAULT_INSPECTOR_HOST;
  const token = options.token ?? newToken();
  const readOnly = options.readOnly ?? false;
  const assets = loadAssets();
  const hub = new LiveHub(options.client, options.followIntervalMs);
  const cache = new ViewCache();
  const { client } = options;
  let port = 0;

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => fail(res, error));
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://inspector.invalid');
    res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    res.setHeader('cache-control', 'no-store');
    const access = checkAccess(req, url, token, port);
    if (access !== 'granted') {
      const status = access === 'missing' ? 401 : 403;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(
        access === 'missing'
          ? 'The durable-agent inspector needs its token: open the URL `durable-agent ui` printed (it ends ?token=…).\n'
          : 'Wrong token: open the URL `durable-agent ui` printed.\n',
      );
      return;
    }
    if (url.searchParams.has('token')) {
      // The token goes into a cookie and out of the address bar (and the browser's history).
      res.writeHead(303, { 'set-cookie': sessionCookie(token, port), location: '/' });
      res.end();
      return;
    }
    const parts = url.pathname.split('/').slice(1);
    if (req.method === 'GET' && url.pathname === '/') return sendAsset(res, 'index.html');
    if (req.method === 'GET' && parts[0] === 'assets' && parts.length === 2) return sendAsset(res, parts[1]!);
    if (parts[0] !== 'api') return notFound(res);
    if (req.method === 'GET' && url.pathname === '/api/config') {
      return sendJson(res, 200, { readOnly, namespace: client.options.namespace, version: PACKAGE_VERSION });
    }
    if (req.method === 'GET' && url.pathname === '/api/runs') {
      return sendJson(res, 200, await listRunPage(client, parseRunListRequest(url.searchParams)));
    }
    if (parts[1] !== 'runs' || parts.length < 3 || parts.length > 4) return notFound(res);
    const workflowId = decodePart(parts[2]!);
    const sub = parts[3];
    if (req.method === 'GET' && sub === undefined) return sendRunView(res, workflowId);
    if (req.method === 'GET' && sub === 'live') return hub.subscribe(workflowId, res);
    if (req.method === 'POST' && sub !== undefined && isAction(sub)) {
      if (readOnly) throw new ReadOnly('this inspector is read-only (durable-agent ui --read-only)');
      checkSameOrigin(req);
      const said = await runAction(client, workflowId, sub, await readJson(req));
      return sendJson(res, 200, { ok: true, message: said });
    }
    return notFound(res);
  }

  async function sendRunView(res: http.ServerResponse, workflowId: string): Promise<void> {
    const description = await getRun(client, workflowId).describe();
    // History only grows: the execution and its length name a view that is never stale.
    const key = `${workflowId}\n${description.runId}\n${description.historyLength}`;
    const json = await cache.get(key, async () =>
      JSON.stringify(buildRunView(description, await readRunRecord(client, workflowId), options.webUiLink(workflowId))),
    );
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(json);
  }

  function sendAsset(res: http.ServerResponse, name: string): void {
    const asset = assets.get(name);
    if (!asset) return notFound(res);
    res.writeHead(200, { 'content-type': asset.type });
    res.end(asset.body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/?token=${token}`,
    host,
    port,
    token,
    hub,
    cache,
    async close() {
      hub.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A state-changing request must come from the page itself: JSON (which a cross-site form cannot
 * send without a preflight this server never answers) and, when the browser says where it comes
 * from, from this server's own origin.
 */
function checkSameOrigin(req: http.IncomingMessage): void {
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
    throw new BadRequest('actions take a JSON body (content-type: application/json)');
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host ?? ''}`) {
    throw new ReadOnly(`actions are taken only from the inspector's own page, not from ${origin.slice(0, 100)}`);
  }
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BadRequest(`the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    throw new BadRequest('the body is not JSON');
  }
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new BadRequest('the run id in the path is not URL-encoded');
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function notFound(res: http.ServerResponse): void {
  sendJson(res, 404, { error: 'no such page' });
}

function fail(res: http.ServerResponse, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  const status =
    error instanceof BadRequest
      ? 400
      : error instanceof ReadOnly
        ? 403
        : error instanceof WorkflowNotFoundError
          ? 404
          : error instanceof SteerRefused
            ? 409
            : error instanceof UndecodablePayload
              ? 422
              : 500;
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, status, { error: status === 404 ? `no such run: ${message}` : message });
}
