/**
 * `AgentRun.follow({ partial: true })`: the in-flight model call's text as events while it streams,
 * from a worker in this process (handed over in-process) and from a worker elsewhere (the call's
 * heartbeat details, read with `describe()`). Real server, the real Anthropic provider against a
 * local server that streams slowly.
 */
import { randomUUID } from 'node:crypto';
import { AgentRun, type FollowEvent, type PartialEvent } from '../../src';
import { PROGRESS_TAIL_CHARS } from '../../src/shared/live-progress';
import { withLiveProgress } from '../support/slow-stream';
import { testAddress, testBundlePath, uniqueQueue, withWorker } from '../support/temporal';
import { WorkerProcess } from '../support/worker-harness';
import { useSlowStreamSuite } from '../support/workflow-suite';

const slow = useSlowStreamSuite('agent-run-partial');
const tag = randomUUID().slice(0, 8);
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${String(i).padStart(5, '0')}`).join(' ');

/** Follows the run to its end, noting when each event came. */
async function followAll(run: AgentRun, partial: boolean): Promise<Array<{ at: number; event: FollowEvent }>> {
  const seen: Array<{ at: number; event: FollowEvent }> = [];
  const events = partial ? run.follow({ partial: true, intervalMs: 200 }) : run.follow({ intervalMs: 200 });
  for await (const event of events) seen.push({ at: Date.now(), event });
  return seen;
}

const partialsOf = (seen: Array<{ event: FollowEvent }>) =>
  seen.map((s) => s.event).filter((e): e is PartialEvent => e.kind === 'partial');

test('beside the worker: partial events carry the text while it streams, their deltas join into the answer', async () => {
  // About 4 s of streaming: 100 deltas of 40 characters, 40 ms apart.
  const answer = `${words(570)} THE-END`;
  slow.server.enqueue({ text: answer, chunkChars: 40, delayMs: 40 });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    const run = await AgentRun.start(
      slow.env.client,
      { prompt: 'answer', model: 'claude-slow', workspace: slow.workspace },
      { taskQueue, workflowId: `agent-run-partial-${tag}-inline` },
    );
    const seen = await followAll(run, true);
    const streamed = slow.server.streamed.at(-1)!;
    const partials = partialsOf(seen);
    // Many, while the answer streams, each with what the stream gained.
    expect(
      partials.filter((_, i) => seen.find((s) => s.event === partials[i])!.at < streamed.endedAt!).length,
    ).toBeGreaterThan(5);
    expect(partials.every((p) => !p.gap)).toBe(true);
    const joined = partials.map((p) => p.delta.text ?? '').join('');
    expect(answer.startsWith(joined)).toBe(true);
    expect(joined.length).toBeGreaterThan(answer.length / 2);
    // The logged events still come, in order, to the end.
    const kinds = seen.map((s) => s.event.kind).filter((k) => k !== 'partial');
    expect(kinds[0]).toBe('run_started');
    expect(kinds.at(-1)).toBe('run_finished');
    // No partial after the call's end was logged.
    const finished = seen.findIndex((s) => s.event.kind === 'model_call_finished');
    expect(seen.slice(finished).some((s) => s.event.kind === 'partial')).toBe(false);
    expect((await run.result()).finalText).toBe(answer);
  });
}, 90_000);

test('from another process: partial events come from the call’s heartbeat details, bounded; none without the option', async () => {
  // About 6 s of streaming, 24,000 characters: more than a tail holds.
  const answer = `${words(3_000)} THE-END`;
  slow.server.enqueue({ text: answer, chunkChars: 200, delayMs: 50 });
  const taskQueue = uniqueQueue('agent-run-partial');
  const worker = new WorkerProcess({
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_TASK_QUEUE: taskQueue,
    DA_TEST_WORKFLOW_BUNDLE: testBundlePath(),
    ANTHROPIC_BASE_URL: slow.server.url,
    ANTHROPIC_API_KEY: 'sk-test',
  });
  try {
    await worker.ready(60_000);
    const run = await AgentRun.start(
      slow.env.client,
      { prompt: 'answer', model: 'claude-slow', workspace: slow.workspace },
      { taskQueue, workflowId: `agent-run-partial-${tag}-remote` },
    );
    const [seen, plain] = await Promise.all([followAll(run, true), followAll(run, false)]);
    const partials = partialsOf(seen);
    expect(partials.length).toBeGreaterThan(0);
    for (const p of partials) {
      expect(p.text!.tail.length).toBeLessThanOrEqual(PROGRESS_TAIL_CHARS);
      expect(answer.slice(p.text!.chars - p.text!.tail.length, p.text!.chars)).toBe(p.text!.tail);
      // The delta is the end of the tail: what the stream gained since the previous partial.
      expect(p.text!.tail.endsWith(p.delta.text!)).toBe(true);
    }
    expect(Math.max(...partials.map((p) => p.text!.chars))).toBeGreaterThan(PROGRESS_TAIL_CHARS);
    expect(plain.some((s) => s.event.kind === 'partial')).toBe(false);
    expect(plain.at(-1)?.event.kind).toBe('run_finished');
    expect(seen.at(-1)?.event.kind).toBe('run_finished');
  } finally {
    await worker.stop();
  }
}, 120_000);
