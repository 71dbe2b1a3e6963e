import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_UI_PORT, dataDir, parseAddress } from '../server/dev-server';

/** The environment variable that names the Web UI's base URL (a UI of its own, docker compose's on :8080). */
export const TEMPORAL_UI_URL_ENV = 'TEMPORAL_UI_URL';
/** The Temporal Cloud UI, for an address of Temporal Cloud (`<namespace>.<account>.tmprl.cloud:7233`). */
const CLOUD_UI = 'https://cloud.temporal.io';
/** Where `durable-agent server --ui-port N` notes its UI, by the server's address: the links then point there. */
const UI_NOTE_FILE = 'web-ui.json';

/**
 * The Web UI that shows the runs of the server at `address`: `TEMPORAL_UI_URL` when set; Temporal
 * Cloud's UI for a Temporal Cloud address; the UI `durable-agent server --ui-port` noted for this
 * address; else the server's port + 1000 on the same host, where the embedded dev server and
 * `temporal server start-dev` put it (7233 → 8233).
 */
export function webUiBase(address: string, env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[TEMPORAL_UI_URL_ENV]?.trim();
  if (configured) return configured.replace(/\/+$/, '');
  let host: string;
  let port: number;
  try {
    ({ host, port } = parseAddress(address));
  } catch {
    return `http://127.0.0.1:${DEFAULT_UI_PORT}`;
  }
  if (/\.tmprl\.cloud$/i.test(host)) return CLOUD_UI;
  const noted = notedUis()[address];
  if (noted) return noted;
  const shownHost = host.includes(':') ? `[${host}]` : host === 'localhost' ? '127.0.0.1' : host;
  const uiPort = port + (DEFAULT_UI_PORT - 7233);
  return `http://${shownHost}:${uiPort <= 65535 ? uiPort : DEFAULT_UI_PORT}`;
}

/** The Web UI page of one run, on the UI of the server at `address`. */
export function webUiLink(
  address: string,
  namespace: string,
  workflowId: string,
  runId?: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const base = `${webUiBase(address, env)}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}

/** Notes the UI of the embedded server `durable-agent server` runs at `address` (best effort). */
export function noteWebUi(address: string, uiUrl: string): void {
  try {
    const dir = dataDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, UI_NOTE_FILE), JSON.stringify({ ...notedUis(), [address]: uiUrl }, null, 2));
  } catch {
    // Only the printed links depend on it; they then assume the port + 1000.
  }
}

function notedUis(): Record<string, string> {
  const file = path.join(dataDir(), UI_NOTE_FILE);
  if (!existsSync(file)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter(
        (e): e is [string, string] => typeof e[1] === 'string' && /^https?:\/\/[^\s]+$/.test(e[1]),
      ),
    );
  } catch {
    return {};
  }
}
