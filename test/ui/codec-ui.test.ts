import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CODEC_KEYS_ENV, dataConverterFromEnv, parseCodecKeys } from '../../src/codec';
import { startCodecServer, type CodecServer } from '../../src/codec/server';
import { startRun } from '../../src/client';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { webUiLink } from '../../src/server/dev-server';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { eventually } from '../support/run-helpers';
import { tempWorkspace, testBundlePath, uniqueQueue } from '../support/temporal';
import { UI_TIMEOUT_MS, describeWithChromium, save, suiteName, type Browser } from './ui-support';
import { startUiStack, type UiStack } from './ui-stack';

/** `binary/encrypted` as the UI prints an undecoded payload's metadata (base64). */
const ENCRYPTED_ENCODING_B64 = Buffer.from('binary/encrypted').toString('base64');

/**
 * The Web UI with encrypted payloads, in headless Chromium: a run recorded by a worker and client
 * with the codec shows only ciphertext until the UI is given the codec server (the UI's own "Codec
 * Server" setting, as a user sets it); then the input and the result read in plaintext. The browser
 * calls the codec server cross-origin, so this also proves its CORS answers. Screenshots land in
 * test-artifacts/.
 */
describeWithChromium(suiteName('Web UI with encrypted payloads'), () => {
  let stack: UiStack | undefined;
  let browser: Browser;
  let codecServer: CodecServer | undefined;
  let connection: Connection | undefined;
  let nativeConnection: NativeConnection | undefined;
  const id = randomBytes(4).toString('hex');
  const markers = {
    prompt: `PROMPTMARK${id}`,
    answer: `ANSWERMARK${id}`,
    file: `FILEMARK${id}`,
  };
  let link = '';

  beforeAll(async () => {
    // The stack's own worker (plaintext) polls a queue of its own and is never used here.
    stack = await startUiStack('codec-ui-idle', new ScriptedModel([]));
    browser = stack.browser;
    const env = { [CODEC_KEYS_ENV]: `ui-key:${randomBytes(32).toString('base64')}` };
    codecServer = await startCodecServer({
      port: 0,
      keys: parseCodecKeys(env[CODEC_KEYS_ENV])!,
      corsOrigins: [stack.server.uiBase],
    });
    const dataConverter = dataConverterFromEnv(env)!;
    connection = await Connection.connect({ address: stack.server.address });
    nativeConnection = await NativeConnection.connect({ address: stack.server.address });
    const client = new Client({ connection, dataConverter });
    const taskQueue = uniqueQueue('codec-ui');
    const workspace = await tempWorkspace('codec-ui');
    await fs.writeFile(path.join(workspace, 'notes.txt'), `${markers.file}\n`);
    const model = new ScriptedModel([
      toolUse([{ name: 'read_file', input: { path: 'notes.txt' } }]),
      text(`The notes say ${markers.answer}.`),
    ]);
    const worker = await createAgentWorker({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: testBundlePath(),
      deps: { models: () => model, tools: createDefaultRegistry() },
      stickyActivities: false,
      workerOptions: { dataConverter },
    });
    const workflowId = `codec-ui-${id}`;
    await worker.runUntil(async () => {
      const handle = await startRun(
        client,
        { prompt: `Read the notes for ${markers.prompt}`, model: 'scripted-codec-ui', workspace },
        { workflowId, taskQueue },
      );
      expect((await handle.result()).finalText).toContain(markers.answer);
      link = webUiLink('default', workflowId, handle.firstExecutionRunId);
    });
  }, 240_000);

  afterAll(async () => {
    await codecServer?.close();
    await connection?.close();
    await nativeConnection?.close();
    await stack?.close();
  });

  /** The workflow page's text once its Input card has loaded (encrypted or not). */
  async function workflowPageText(page: import('playwright-core').Page, ready: (text: string) => boolean) {
    await page.goto(link);
    return eventually(
      () => page.innerText('body'),
      (body) => expect(ready(body) ? 'ready' : body).toBe('ready'),
      UI_TIMEOUT_MS,
    );
  }

  test('without the codec endpoint the UI shows only ciphertext: no prompt, no answer', async () => {
    const page = await browser.context.newPage();
    const body = await workflowPageText(page, (t) => t.includes('Result') && t.includes(ENCRYPTED_ENCODING_B64));
    await save(page, 'codec-ui-without-endpoint');
    expect(body).toContain('"encryption-key-id"');
    for (const marker of Object.values(markers)) expect(body).not.toContain(marker);
    await page.close();
  }, 90_000);

  test('with the codec server set in the UI, the input and the result are decoded', async () => {
    const page = await browser.context.newPage();
    await workflowPageText(page, (t) => t.includes(ENCRYPTED_ENCODING_B64));
    // The UI's "Codec Server" setting, as a user fills it in (kept in the browser).
    await page.getByTestId('data-encoder-status').click();
    await page.getByTestId('data-encoder-endpoint-input').fill(codecServer!.url);
    await page.getByTestId('confirm-data-encoder-button').click();
    const body = await workflowPageText(
      page,
      (t) => t.includes(markers.prompt) && t.includes(markers.answer) && !t.includes(ENCRYPTED_ENCODING_B64),
    );
    await save(page, 'codec-ui-with-endpoint');
    expect(body).toContain(`Read the notes for ${markers.prompt}`);
    expect(body).toContain(`The notes say ${markers.answer}.`);
    await page.close();
  }, 90_000);
});
