import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { getRun, interruptRun, startRun } from '../../src/client';
import { ScriptedModel, delayed, text, toolUse } from '../../src/models/scripted';
import { devServerArgs, freePort, waitUntilReachable, webUiLink } from '../../src/server/dev-server';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker, type AgentWorker } from '../../src/worker';
import { eventually } from '../support/run-helpers';
import { quietRuntime, tempWorkspace, testBundlePath } from '../support/temporal';

/**
 * The Temporal Web UI, checked in a real browser: an own dev server WITH the UI (in memory, free
 * ports), a worker on a scripted model, a run that called bash and read_file and now waits in its
 * second model call, and Debian's Chromium driven headless by playwright-core (no browser download).
 * Screenshots land in test-artifacts/. Skipped only when /usr/bin/chromium is missing (.ci/run
 * installs it).
 */
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');

const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;
const suiteName = existsSync(CHROMIUM)
  ? 'Temporal Web UI (headless Chromium)'
  : `Temporal Web UI (skipped: ${CHROMIUM} is missing; apt-get install -y chromium)`;

/** The UI is a single-page app that fills in as data arrives: more patience than the default. */
const UI_TIMEOUT_MS = 30_000;

describeWithChromium(suiteName, () => {
  let server: ChildProcess;
  let serverDir: string;
  let uiBase: string;
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let client: Client;
  let browser: BrowserContext;
  let userDataDir: string | undefined;
  let worker: AgentWorker | undefined;
  let workerDone: Promise<void> | undefined;
  const run = { workflowId: `ui-run-${Date.now()}`, link: '', workspace: '' };
  const savedUiUrl = process.env.TEMPORAL_UI_URL;

  beforeAll(async () => {
    quietRuntime();
    const cli = process.env.DA_TEST_TEMPORAL_CLI;
    if (!cli) throw new Error('DA_TEST_TEMPORAL_CLI is not set: run the suite with `npm test`.');
    const address = `127.0.0.1:${await freePort()}`;
    const uiPort = await freePort();
    serverDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-ui-'));
    const log = openSync(path.join(serverDir, 'temporal-server.log'), 'a');
    // In memory (no db file), with the Web UI.
    server = spawn(cli, devServerArgs({ address, uiPort, headless: false }), { stdio: ['ignore', log, log] });
    await waitUntilReachable(address, 60_000, server);
    uiBase = `http://127.0.0.1:${uiPort}`;
    process.env.TEMPORAL_UI_URL = uiBase;
    await waitForHttp(uiBase, 30_000);

    connection = await Connection.connect({ address });
    nativeConnection = await NativeConnection.connect({ address });
    client = new Client({ connection });

    userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-chromium-'));
    browser = await chromium.launchPersistentContext(userDataDir, {
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

    // A run that called bash and read_file, and now waits in its second model call (so it is
    // running, with live details) until afterAll interrupts it.
    run.workspace = await tempWorkspace('ui');
    await fs.writeFile(path.join(run.workspace, 'notes.txt'), 'remember the milk\n');
    const model = new ScriptedModel([
      toolUse([
        { name: 'bash', input: { command: 'echo hello from bash' } },
        { name: 'read_file', input: { path: 'notes.txt' } },
      ]),
      delayed(120_000, text('never')),
    ]);
    const taskQueue = `ui-${Date.now()}`;
    worker = await createAgentWorker({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: testBundlePath(),
      deps: { models: () => model, tools: createDefaultRegistry() },
    });
    workerDone = worker.run();
    const handle = await startRun(
      client,
      { prompt: 'Check the notes in the workspace\nand say hello.', model: 'scripted-ui', workspace: run.workspace },
      { workflowId: run.workflowId, taskQueue },
    );
    // The link the CLI prints, pointed at this server's UI by TEMPORAL_UI_URL.
    run.link = webUiLink('default', run.workflowId, handle.firstExecutionRunId);
    await eventually(
      async () => model.requests.length,
      (n) => expect(n).toBe(2),
      UI_TIMEOUT_MS,
    );
  }, 120_000);

  afterAll(async () => {
    if (savedUiUrl === undefined) delete process.env.TEMPORAL_UI_URL;
    else process.env.TEMPORAL_UI_URL = savedUiUrl;
    if (run.link) {
      await interruptRun(getRun(client, run.workflowId), 'test over');
      await getRun(client, run.workflowId).result();
    }
    worker?.shutdown();
    await workerDone;
    await browser?.close();
    await connection?.close();
    await nativeConnection?.close();
    if (server && server.exitCode === null) {
      await new Promise<void>((resolve) => {
        server.once('exit', () => resolve());
        server.kill('SIGTERM');
        setTimeout(() => server.kill('SIGKILL'), 5000).unref();
      });
    }
    if (serverDir) await fs.rm(serverDir, { recursive: true, force: true });
    if (userDataDir) await fs.rm(userDataDir, { recursive: true, force: true });
  });

  test("the event history shows the run summary (the prompt's first line) and every activity's summary", async () => {
    const page = await browser.newPage();
    await page.goto(run.link);
    // The table labels each event's details; a summary is a "Summary" label followed by its value.
    const summaries = page.locator('xpath=//tr//p[normalize-space()="Summary"]/following-sibling::div[1]');
    const shown = await eventually(
      () => summaries.allInnerTexts(),
      (texts) => expect(texts.map((t) => t.trim())).toEqual(expect.arrayContaining(EXPECTED_SUMMARIES)),
      UI_TIMEOUT_MS,
    );
    // The workflow's summary is on its first event, and it is only the prompt's first line.
    const started = page.locator('tr', { hasText: 'Workflow Execution Started' });
    expect(await started.innerText()).toContain('Check the notes in the workspace');
    expect(await started.innerText()).not.toContain('and say hello');
    // The timeline names each (server-side) activity by type and summary. read_file runs as a local
    // activity: it has no timeline bar, and its summary is the marker's, checked in the table above.
    const timeline = (await page.locator('svg text').allTextContents()).map((t) => t.trim());
    expect(timeline).toEqual(
      expect.arrayContaining(['callModel • model scripted-ui · iteration 1', 'runTool • bash: echo hello from bash']),
    );
    expect(shown.length).toBeGreaterThanOrEqual(EXPECTED_SUMMARIES.length);
    await save(page, 'web-ui-history');
  }, 60_000);

  test('the User Metadata tab shows the summary, the static details, the activities and the live current details', async () => {
    const page = await browser.newPage();
    await page.goto(run.link);
    await page.getByTestId('user-metadata-tab').click();

    expect(await renderedUnder(page, 'Summary', (t) => t.includes('Check the notes'))).toBe(
      'Check the notes in the workspace',
    );
    const details = await renderedUnder(page, 'Details', (t) => t.includes('Model'));
    expect(details).toContain('Model: scripted-ui');
    expect(details).toContain('Limits: 200 iterations · no budget limit · 8192 max tokens per model call');
    expect(details).toContain(`Workspace: ${run.workspace}`);
    expect(details).toContain('Tools: bash, read_file, write_file, edit_file, glob, grep');

    const events = page.locator(
      'xpath=//h3[normalize-space()="Events with Metadata"]/following::span[@class="text-sm"]',
    );
    await eventually(
      () => events.allInnerTexts(),
      (texts) =>
        expect(texts).toEqual([
          'model scripted-ui · iteration 1',
          'bash: echo hello from bash',
          'read_file notes.txt',
          'model scripted-ui · iteration 2',
        ]),
      UI_TIMEOUT_MS,
    );

    // Current details come from the running workflow (setCurrentDetails), through a query.
    const current = await renderedUnder(page, 'Current Details', (t) => t.includes('iteration'));
    expect(current).toContain('running · iteration 1 / 200 · model scripted-ui');
    expect(current).toContain('cost $0.0000');
    await save(page, 'web-ui-user-metadata');
  }, 60_000);
});

const EXPECTED_SUMMARIES = [
  'Check the notes in the workspace',
  'model scripted-ui · iteration 1',
  'bash: echo hello from bash',
  'read_file notes.txt',
  'model scripted-ui · iteration 2',
];

/** The text of the markdown the UI renders (in an iframe) under a heading, once `ready` accepts it. */
async function renderedUnder(page: Page, heading: string, ready: (text: string) => boolean): Promise<string> {
  const frame = page.frameLocator(`xpath=//h3[normalize-space()="${heading}"]/following::iframe[1]`);
  return eventually(
    async () => (await frame.locator('body').innerText({ timeout: 30_000 })).replace(/\s+/g, ' ').trim(),
    (text) => expect(ready(text) ? 'ready' : text).toBe('ready'),
    UI_TIMEOUT_MS,
  );
}

/** A full-page screenshot (and the page's text, for a failing run) in test-artifacts/. */
async function save(page: Page, name: string): Promise<void> {
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
