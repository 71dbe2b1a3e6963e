/**
 * An interrupt reaches a streaming model call promptly although the call heartbeats seldom (each
 * heartbeat is a billable action): the real workflow and worker, the real Anthropic SDK against a
 * local Messages API that streams slowly, the default heartbeat timeout (20 s, so 8 s between the
 * call's heartbeats once it streams a while).
 */
import { AnthropicProvider } from '../../src/models/anthropic';
import { interruptSignal } from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { startSlowStream, type SlowStream } from '../support/slow-stream';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(90_000);
const { suite, start } = useWorkflowSuite('streamed-interrupt', () => startSlowStream());
const stream = (): SlowStream => suite.fake;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

test('an interrupt just after a streaming call heartbeated ends the run within 5 s, not at the next heartbeat', async () => {
  // 20 s of text: 200 deltas of 10 characters, one every 100 ms.
  stream().enqueue({ text: 'x'.repeat(2_000), chunkChars: 10, delayMs: 100 });
  const provider = new AnthropicProvider({ baseURL: stream().url, apiKey: 'sk-test' });
  await withWorker(suite.env, { model: provider }, async (tq) => {
    const handle = await start(tq, { model: 'claude-sonnet-5-5' });
    const deadline = Date.now() + 30_000;
    while (stream().streamed[0]?.firstTextAt === undefined && Date.now() < deadline) await sleep(20);
    const firstText = stream().streamed[0]?.firstTextAt;
    expect(firstText).toBeDefined();
    // Heartbeats go 1, 3 and 7 s after the first delta, then 8 s apart: the next is 8 s away here.
    await sleep(firstText! + 7_300 - Date.now());
    const sentAt = Date.now();
    await handle.signal(interruptSignal, { reason: 'stop the stream' });
    const result = await runResult(handle);
    expect(result.exitReason).toBe('interrupted');
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    // The request was cut, not streamed to its end.
    expect(stream().streamed[0]!.endedAt).toBeUndefined();
  });
});
