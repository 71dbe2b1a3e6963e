import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { Client } from '@temporalio/client';
import { getRun } from '../../src/client';
import { CODEC_KEYS_ENV, dataConverterFromEnv } from '../../src/codec';
import { AnthropicProvider } from '../../src/models/anthropic';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { startSlowStream, withLiveProgress, type SlowStream } from '../support/slow-stream';
import { connectTestEnv, tempWorkspace, type TestEnv } from '../support/temporal';
import { describeWithChromium, launchChromium, suiteName, type Browser } from '../ui/ui-support';
import { startInspectorStack, type InspectorStack } from './inspector-stack';

/**
 * The inspector on a running run: the model's text appears on the page while a slow fake model
 * still streams it (before the stream's end); and an encrypted run, read by an inspector whose
 * client has the codec keys, while one without them says it cannot decode the run.
 */

const UI_MS = 30_000;
let env: TestEnv;
let browser: Browser;
let slow: SlowStream;

describeWithChromium(suiteName('durable-agent ui, live and encrypted'), () => {
  beforeAll(async () => {
    env = await connectTestEnv();
    browser = await launchChromium();
    slow = await startSlowStream();
  }, 120_000);
  afterAll(async () => {
    await slow?.close();
    await browser?.close();
    await env?.close();
  });

  test("the model's text shows on the page while the slow model is still streaming it", async () => {
    const stack: InspectorStack = await startInspectorStack('inspector-live', {
      client: env.client,
      nativeConnection: env.nativeConnection,
      browser,
    });
    try {
      stack.model('claude-slow', withLiveProgress(new AnthropicProvider({ apiKey: 'sk-test', baseURL: slow.url })));
      const words = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      slow.enqueue({ text: `STREAMED-START ${words} STREAMED-END`, chunkChars: 12, delayMs: 60, gate });
      const id = `inspector-live-${Date.now()}`;
      await stack.start(id, { prompt: 'say a lot', model: 'claude-slow', workspace: await tempWorkspace('live') });
      const page = await stack.page(`#/run/${encodeURIComponent(id)}`);
      await page.getByRole('heading', { name: id }).waitFor({ timeout: UI_MS });
      release();
      const live = page.getByRole('region', { name: 'Live' });
      await live.getByText('STREAMED-START', { exact: false }).waitFor({ timeout: UI_MS });
      // On the page before the model finished writing it.
      expect(slow.streamed[0]?.endedAt).toBeUndefined();
      await getRun(stack.client, id).result();
      await page.getByText('Exit reason: completed').waitFor({ timeout: UI_MS });
      await page.getByRole('region', { name: 'Turn 1' }).getByText('STREAMED-END', { exact: false }).waitFor();
      expect(await live.isHidden()).toBe(true);
      await page.close();
    } finally {
      await stack.close();
    }
  }, 120_000);

  test('an encrypted run is read with the codec keys; without them the page says it cannot decode it', async () => {
    const keys = { [CODEC_KEYS_ENV]: `k1:${randomBytes(32).toString('base64')}` };
    const dataConverter = dataConverterFromEnv(keys)!;
    const sealed = new Client({ connection: env.connection, dataConverter });
    const stack = await startInspectorStack('inspector-sealed', {
      client: sealed,
      nativeConnection: env.nativeConnection,
      browser,
      dataConverter,
      workflowBundlePath: path.resolve(__dirname, '..', '..', 'dist', 'workflow-bundle-codec.js'),
    });
    const blind = await startInspectorStack('inspector-blind', {
      client: env.client,
      nativeConnection: env.nativeConnection,
      browser,
    });
    try {
      const secret = `SECRET-ANSWER-${randomBytes(4).toString('hex')}`;
      stack.model(
        'scripted-sealed',
        new ScriptedModel([toolUse([{ name: 'glob', input: { pattern: '*.sealed' } }]), text(secret)]),
      );
      const id = `inspector-sealed-${Date.now()}`;
      await stack.start(id, {
        prompt: 'sealed prompt',
        model: 'scripted-sealed',
        workspace: await tempWorkspace('sealed'),
      });
      await getRun(sealed, id).result();
      const page = await stack.page(`#/run/${encodeURIComponent(id)}`);
      await page.getByText(secret).first().waitFor({ timeout: UI_MS });
      await page.getByText('sealed prompt').first().waitFor();
      await page.getByRole('region', { name: 'Turn 1' }).getByText('glob').waitFor();
      await page.close();
      const without = await blind.page(`#/run/${encodeURIComponent(id)}`);
      await without
        .getByRole('alert')
        .getByText(/DURABLE_AGENT_CODEC_KEYS/)
        .waitFor({ timeout: UI_MS });
      expect(await without.getByText(secret).count()).toBe(0);
      await without.close();
    } finally {
      await blind.close();
      await stack.close();
    }
  }, 180_000);
});
