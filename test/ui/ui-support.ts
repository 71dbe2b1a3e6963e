import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { devServerArgs, freePort, waitUntilReachable } from '../../src/server/dev-server';
import { eventually } from '../support/run-helpers';

/**
 * The Temporal Web UI in a real browser: an own dev server WITH the UI (in memory, free ports) and
 * Debian's Chromium driven headless by playwright-core (no browser download). Suites are skipped
 * only when /usr/bin/chromium is missing (.ci/run installs it).
 */
export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');
export const hasChromium = existsSync(CHROMIUM);
export const describeWithChromium = hasChromium ? describe : describe.skip;
export const suiteName = (name: string) =>
  hasChromium
    ? `${name} (headless Chromium)`
    : `${name} (skipped: ${CHROMIUM} is missing; apt-get install -y chromium)`;

/** The UI is a single-page app that fills in as data arrives: more patience than the default. */
export const UI_TIMEOUT_MS = 30_000;

export interface UiServer {
  address: string;
  uiBase: string;
  stop(): Promise<void>;
}

/**
 * A dev server with the Web UI on free loopback ports, in memory; `stop` ends it (by its pid) and
 * removes its files. A port found free can be taken by another test file before the server binds
 * it, and a loaded machine can be slow to serve the UI: one more try on fresh ports then.
 */
export async function startUiServer(): Promise<UiServer> {
  try {
    return await startUiServerOnce();
  } catch {
    return startUiServerOnce();
  }
}

async function startUiServerOnce(): Promise<UiServer> {
  const cli = process.env.DA_TEST_TEMPORAL_CLI;
  if (!cli) throw new Error('DA_TEST_TEMPORAL_CLI is not set: run the suite with `npm test`.');
  const address = `127.0.0.1:${await freePort()}`;
  const uiPort = await freePort();
  const serverDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-ui-'));
  const log = openSync(path.join(serverDir, 'temporal-server.log'), 'a');
  const server: ChildProcess = spawn(cli, devServerArgs({ address, uiPort, headless: false }), {
    stdio: ['ignore', log, log],
  });
  const stop = async () => {
    if (server.exitCode === null) {
      await new Promise<void>((resolve) => {
        server.once('exit', () => resolve());
        server.kill('SIGTERM');
        setTimeout(() => server.kill('SIGKILL'), 5000).unref();
      });
    }
    await fs.rm(serverDir, { recursive: true, force: true });
  };
  try {
    await waitUntilReachable(address, 60_000, server);
    const uiBase = `http://127.0.0.1:${uiPort}`;
    await waitForHttp(uiBase, 45_000);
    return { address, uiBase, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1600, height: 1200 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      // Without these Chromium phones home, and the closed network refuses its connections.
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await fs.rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** The iframe the UI renders a markdown block in, under a heading of the User Metadata tab. */
export function markdownUnder(page: Page, heading: string) {
  return page.frameLocator(`xpath=//h3[normalize-space()="${heading}"]/following::iframe[1]`);
}

/** The text of the markdown the UI renders (in an iframe) under a heading, once `ready` accepts it. */
export async function renderedUnder(page: Page, heading: string, ready: (text: string) => boolean): Promise<string> {
  const frame = markdownUnder(page, heading);
  return eventually(
    async () => (await frame.locator('body').innerText({ timeout: 30_000 })).replace(/\s+/g, ' ').trim(),
    (text) => expect(ready(text) ? 'ready' : text).toBe('ready'),
    UI_TIMEOUT_MS,
  );
}

/** A full-page screenshot (and the page's text, for a failing run) in test-artifacts/. */
export async function save(page: Page, name: string): Promise<void> {
  await fs.mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
  await fs.writeFile(path.join(ARTIFACTS, `${name}.txt`), await page.innerText('body'));
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`the Web UI did not answer at ${url} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The height of the iframe a markdown block is shown in, and the height its content needs. */
export async function markdownHeights(page: Page, heading: string): Promise<{ shown: number; needed: number }> {
  const iframe = page.locator(`xpath=//h3[normalize-space()="${heading}"]/following::iframe[1]`);
  const box = await iframe.boundingBox();
  const needed = await markdownUnder(page, heading)
    .locator('body')
    .evaluate((body) => body.ownerDocument.documentElement.scrollHeight);
  return { shown: Math.round(box?.height ?? 0), needed };
}
