import { randomUUID } from 'node:crypto';
import { follow } from '../../src/cli/run-command';
import { getRun, queryEvents, startRun, type AgentHandle } from '../../src/client';
import { PROGRESS_TAIL_CHARS } from '../../src/shared/live-progress';
import { withLiveProgress } from '../support/slow-stream';
import { useSlowStreamSuite } from '../support/workflow-suite';
import { withWorker } from '../support/temporal';

/**
 * How run/follow get a run's progress cheaply (each query, heartbeat and update is a billable
 * action; describe() is not): the events are queried only when history moved, the inline worker
 * hands the streamed text over in-process, and `includePartial` reads the in-flight call's text
 * from its heartbeat details, bounded. Real server, real worker, the real Anthropic provider
 * against a local server that streams slowly.
 */

const slow = useSlowStreamSuite('live-feed');
const tag = randomUUID().slice(0, 8);
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${String(i).padStart(5, '0')}`).join(' ');

/** A handle whose `events` queries are counted. */
function countedHandle(id: string): { handle: AgentHandle; queries: () => number } {
  const handle = getRun(slow.env.client, id);
  let n = 0;
  const query = handle.query.bind(handle);
  handle.query = ((...args: Parameters<typeof query>) => {
    n += 1;
    return query(...args);
  }) as typeof handle.query;
  return { handle, queries: () => n };
}

test('follow() beside the worker gets the text in-process at once, and queries the events only when history moves', async () => {
  // About 4 s of streaming: 100 deltas of 40 characters, 40 ms apart.
  const answer = `${words(570)} THE-END`;
  slow.server.enqueue({ text: answer, chunkChars: 40, delayMs: 40 });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    const id = `live-feed-${tag}-inline`;
    await startRun(
      slow.env.client,
      { prompt: 'answer', model: 'claude-slow', workspace: slow.workspace },
      { workflowId: id, taskQueue },
    );
    const { handle, queries } = countedHandle(id);
    const printedAt: Array<{ at: number; chars: number }> = [];
    let printed = '';
    const followed = await follow(handle, () => {}, {
      live: {
        styled: false,
        write: (chunk) => {
          printed += chunk;
          printedAt.push({ at: Date.now(), chars: printed.length });
        },
      },
    });
    expect(followed.result.exitReason).toBe('completed');
    expect(printed).toContain(answer);
    const streamed = slow.server.streamed[slow.server.streamed.length - 1]!;
    // In-process: the text is on screen before the call's first heartbeat could carry it (1 s after
    // the first delta) and keeps coming while it streams.
    const first = printedAt.find((p) => p.chars > 0)!;
    expect(first.at - streamed.firstTextAt!).toBeLessThan(900);
    expect(printedAt.filter((p) => p.at < streamed.endedAt!).length).toBeGreaterThan(10);
    // Before, the events were queried every 300 ms (over a dozen times for this run).
    expect(queries()).toBeLessThanOrEqual(4);
  });
}, 90_000);

test('includePartial adds the in-flight call’s streamed text, bounded, and only when asked', async () => {
  // About 6 s of streaming, 24,000 characters: far more than a partial carries.
  const answer = `${words(3_000)} THE-END`;
  slow.server.enqueue({ text: answer, chunkChars: 200, delayMs: 50 });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    const id = `live-feed-${tag}-partial`;
    const handle = await startRun(
      slow.env.client,
      { prompt: 'answer', model: 'claude-slow', workspace: slow.workspace },
      { workflowId: id, taskQueue },
    );
    const partials: Array<{ chars: number; tail: string }> = [];
    let plain: Awaited<ReturnType<typeof queryEvents>> | undefined;
    for (;;) {
      const page = await queryEvents(handle, 0, { includePartial: true });
      if (page.partial?.text) partials.push(page.partial.text);
      plain ??= await queryEvents(handle, 0);
      const finished = page.events.some((e) => e.kind === 'run_finished');
      if (finished) {
        expect(page.partial).toBeUndefined();
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(plain?.partial).toBeUndefined();
    expect(partials.length).toBeGreaterThan(0);
    for (const p of partials) {
      expect(p.tail.length).toBeLessThanOrEqual(PROGRESS_TAIL_CHARS);
      // The tail is the stream's characters [chars - tail.length, chars).
      expect(answer.slice(p.chars - p.tail.length, p.chars)).toBe(p.tail);
    }
    // It grows while the call streams, and outgrew what one partial holds.
    expect(Math.max(...partials.map((p) => p.chars))).toBeGreaterThan(PROGRESS_TAIL_CHARS);
  });
}, 90_000);
