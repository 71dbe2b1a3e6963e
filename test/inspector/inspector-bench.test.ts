import type { Page } from 'playwright-core';
import { getRun } from '../../src/client';
import { ScriptedModel, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import { connectTestEnv, tempWorkspace, type TestEnv } from '../support/temporal';
import { describeWithChromium, suiteName } from '../ui/ui-support';
import { startInspectorStack, type InspectorStack } from './inspector-stack';

/**
 * How fast a long run's page is usable: a 200-iteration run (a tool call per turn) against a
 * 1-iteration run measured the same way in the same browser, cold (the server reads the history)
 * and warm (the view kept for reopening). "Usable": the last turn's heading is on screen, measured
 * in the page from the start of its navigation. Prints the figures for docs/benchmarks.md.
 */

const ITERATIONS = 200;
/** The target, on this machine. */
const USABLE_WITHIN_MS = 1_000;
let env: TestEnv;
let stack: InspectorStack;

async function usableMs(page: Page, url: string, lastTurn: number): Promise<number> {
  // A new document each time (a hash change alone would keep the previous one's clock).
  await page.goto('about:blank');
  await page.goto(url);
  await page.getByRole('heading', { name: `Turn ${lastTurn}`, exact: true }).waitFor({ timeout: 60_000 });
  return page.evaluate(() => performance.now());
}

describeWithChromium(suiteName('durable-agent ui, a 200-iteration run'), () => {
  beforeAll(async () => {
    env = await connectTestEnv();
    stack = await startInspectorStack('inspector-bench', {
      client: env.client,
      nativeConnection: env.nativeConnection,
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await env?.close();
  });

  test(`a ${ITERATIONS}-iteration run's page becomes usable; its time is measured (target ${USABLE_WITHIN_MS} ms)`, async () => {
    const steps: ScriptStep[] = [];
    for (let i = 1; i < ITERATIONS; i++) {
      steps.push(
        toolUse([{ name: 'glob', input: { pattern: `*.n${i}` } }], {
          text: `Turn ${i}: looking for files of kind ${i}.`,
          usage: { inputTokens: 1000 + 50 * i, outputTokens: 40 },
        }),
      );
    }
    steps.push(text('Looked everywhere.', { usage: { inputTokens: 11_000, outputTokens: 10 } }));
    stack.model('scripted-long', new ScriptedModel(steps, { record: false }));
    stack.model('scripted-short', new ScriptedModel([text('Short.')]));
    const long = `inspector-bench-long-${Date.now()}`;
    const short = `inspector-bench-short-${Date.now()}`;
    const workspace = await tempWorkspace('bench');
    await stack.start(long, { prompt: 'look a lot', model: 'scripted-long', workspace });
    await stack.start(short, { prompt: 'look once', model: 'scripted-short', workspace });
    await getRun(stack.client, short).result();
    const result = await getRun(stack.client, long).result();
    expect(result.iterations).toBe(ITERATIONS);

    const page = await stack.page();
    const base = `http://127.0.0.1:${stack.inspector.port}/`;
    const shortCold = await usableMs(page, `${base}#/run/${short}`, 1);
    const longCold = await usableMs(page, `${base}#/run/${long}`, ITERATIONS);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push(await usableMs(page, `${base}#/run/${long}`, ITERATIONS));
    const shortWarm = await usableMs(page, `${base}#/run/${short}`, 1);
    warm.sort((a, b) => a - b);
    const median = warm[2]!;
    process.stdout.write(
      `inspector page usable (ms, from navigation start to the last turn on screen):\n` +
        `  1-iteration run:   cold ${shortCold.toFixed(0)}, warm ${shortWarm.toFixed(0)}\n` +
        `  ${ITERATIONS}-iteration run: cold ${longCold.toFixed(0)}, warm median of 5 ${median.toFixed(0)} ` +
        `(min ${warm[0]!.toFixed(0)}, max ${warm[4]!.toFixed(0)})\n`,
    );
    // Cost is measured, not asserted in the default suite (a loaded CI machine is not "this machine"):
    // DA_ASSERT_TIMING=1 checks the target, the cold load included (the server's first read of the
    // whole history). The figures in docs/benchmarks.md come from this output.
    if (process.env.DA_ASSERT_TIMING === '1') {
      expect(longCold).toBeLessThanOrEqual(USABLE_WITHIN_MS);
      expect(median).toBeLessThanOrEqual(USABLE_WITHIN_MS);
    }
    await page.close();
  }, 600_000);
});
