import { temporal } from '@temporalio/proto';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { follow } from '../../src/cli/run-command';
import { getRun } from '../../src/client';
import { CLI_BIN } from '../support/cli-process';
import { withLiveProgress } from '../support/slow-stream';
import { useSlowStreamSuite } from '../support/workflow-suite';
import { testAddress, withWorker } from '../support/temporal';

/**
 * `run` and `follow` print the model's words while the model call streams (thinking labelled),
 * and the final answer once; the stream costs history a constant per model call, not the
 * answer's length. A real worker calls the real Anthropic provider against a local server that
 * streams slowly; the built CLI runs as a user runs it, its stdout is time-stamped per chunk.
 */

const slow = useSlowStreamSuite('live-text');
const tag = randomUUID().slice(0, 8);

/** Numbered words, so a repeat, a gap or a reordering anywhere shows. */
const words = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, '0')}`).join(' ');
const ANSWER = `${words('w', 500)} THE-END`;
const THINKING = `${words('t', 60)} done-thinking`;

interface Chunk {
  at: number;
  text: string;
}

/** The built CLI; stdout kept chunk by chunk with the time each arrived. */
function cli(
  args: string[],
  taskQueue: string,
  onStdout?: (sofar: string) => void,
): Promise<{ code: number | null; chunks: Chunk[]; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: { ...process.env, TEMPORAL_ADDRESS: testAddress(), TEMPORAL_TASK_QUEUE: taskQueue, ANTHROPIC_API_KEY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Chunk[] = [];
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    chunks.push({ at: Date.now(), text: c.toString() });
    onStdout?.(chunks.map((x) => x.text).join(''));
  });
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, chunks, stdout: chunks.map((c) => c.text).join(''), stderr })),
  );
}

const runArgs = (id: string, ...extra: string[]) => [
  'run',
  'answer slowly',
  '--model',
  'claude-slow',
  '--workspace',
  slow.workspace,
  '--id',
  id,
  '--no-inline-worker',
  ...extra,
];

/** When the first stdout chunk that makes `needle` complete arrived. */
function printedAt(chunks: Chunk[], needle: string): number | undefined {
  let sofar = '';
  for (const c of chunks) {
    sofar += c.text;
    if (sofar.includes(needle)) return c.at;
  }
  return undefined;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

function expectAnswerOnceAndLive(out: { stdout: string; chunks: Chunk[] }, endedAt: number): void {
  // Words from the first quarter of the answer were on screen seconds before the stream ended.
  const early = printedAt(out.chunks, 'w00100 ');
  expect(early).toBeDefined();
  expect(early!).toBeLessThan(endedAt - 1_500);
  // The whole answer, in one piece (streamed, then completed), and each word once.
  expect(out.stdout).toContain(ANSWER);
  expect(count(out.stdout, 'w00000 ')).toBe(1);
  expect(count(out.stdout, 'w00499 ')).toBe(1);
  expect(count(out.stdout, 'THE-END')).toBe(1);
}

test('run prints the answer while it streams, thinking labelled, and the final answer once', async () => {
  // 3,500 characters of answer in 88 deltas, 60 ms apart: about 5 s of streaming after 1 s of thinking.
  slow.server.enqueue({ thinking: THINKING, text: ANSWER, chunkChars: 40, delayMs: 60 });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    const out = await cli(runArgs(`live-${tag}-run`), taskQueue);
    if (process.env.DA_SHOW_OUTPUT) process.stderr.write(out.stdout);
    expect(out.code).toBe(0);
    const streamed = slow.server.streamed[slow.server.streamed.length - 1]!;
    expectAnswerOnceAndLive(out, streamed.endedAt!);
    // Thinking: labelled (plain, since stdout is a pipe), whole, once, before the answer.
    expect(out.stdout).toContain(`── thinking ──\n${THINKING}\n── end of thinking ──\n`);
    expect(count(out.stdout, 't00000 ')).toBe(1);
    expect(out.stdout.indexOf('done-thinking')).toBeLessThan(out.stdout.indexOf('w00000 '));
    expect(printedAt(out.chunks, 't00030 ')!).toBeLessThan(streamed.endedAt! - 1_500);
    // No terminal escapes on a pipe.
    expect(out.stdout).not.toContain('\x1b[');
    expect(out.stdout).toMatch(/exit reason completed/);
  });
}, 90_000);

test('follow of a running run prints the answer while it streams, and once', async () => {
  const id = `live-${tag}-follow`;
  // The answer is held back until the follower is up (a CLI takes a while to start on a busy machine).
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  slow.server.enqueue({ text: ANSWER, chunkChars: 40, delayMs: 60, gate });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    expect((await cli(runArgs(id, '--detach'), taskQueue)).code).toBe(0);
    const out = await cli(['follow', id], taskQueue, (sofar) => sofar.includes('run started') && release());
    expect(out.code).toBe(0);
    expectAnswerOnceAndLive(out, slow.server.streamed[slow.server.streamed.length - 1]!.endedAt!);
  });
}, 90_000);

test('follow() prints to the live sink it is given while the answer streams, and the answer once', async () => {
  // The same as above in-process: `follow` with a stream sink, as `durable-agent follow` calls it.
  const id = `live-${tag}-follow-fn`;
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  slow.server.enqueue({ text: ANSWER, chunkChars: 40, delayMs: 60, gate });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    expect((await cli(runArgs(id, '--detach'), taskQueue)).code).toBe(0);
    const chunks: Chunk[] = [];
    const write = (text: string) => {
      chunks.push({ at: Date.now(), text });
      if (text.includes('run started')) release();
    };
    const followed = await follow(getRun(slow.env.client, id), (line) => write(`${line}\n`), {
      live: { write, styled: false },
    });
    expect(followed.result.exitReason).toBe('completed');
    expect(followed.shownAnswer).toBe(ANSWER);
    const stdout = chunks.map((c) => c.text).join('');
    expectAnswerOnceAndLive({ stdout, chunks }, slow.server.streamed[slow.server.streamed.length - 1]!.endedAt!);
  });
}, 90_000);

test('--json keeps stdout to the result; the live text goes to stderr', async () => {
  slow.server.enqueue({ text: 'A short streamed answer.', chunkChars: 5, delayMs: 20 });
  await withWorker(slow.env, { model: withLiveProgress(slow.provider()) }, async (taskQueue) => {
    const out = await cli(runArgs(`live-${tag}-json`, '--json'), taskQueue);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ exitReason: 'completed', finalText: 'A short streamed answer.' });
  });
}, 60_000);

/** The run's whole event history, as the server stores it, in bytes. */
async function historyBytes(workflowId: string): Promise<number> {
  const history = await slow.env.client.workflow.getHandle(workflowId).fetchHistory();
  return temporal.api.history.v1.History.encode(history).finish().length;
}

test('the live stream adds a constant to history per model call, whatever the answer length', async () => {
  const sizes = { short: 2_000, long: 200_000 };
  const bytes: Record<string, number> = {};
  for (const live of [true, false]) {
    await withWorker(slow.env, { model: withLiveProgress(slow.provider(), live) }, async (taskQueue) => {
      for (const [name, size] of Object.entries(sizes)) {
        // Streamed in 400 deltas with pauses, so heartbeats carry it while it streams.
        slow.server.enqueue({ text: 'x'.repeat(size), chunkChars: Math.ceil(size / 400), delayMs: 5 });
        const id = `live-${tag}-history-${name}-${live ? 'live' : 'plain'}`;
        const out = await cli(runArgs(id, '--json'), taskQueue);
        expect(out.code).toBe(0);
        bytes[`${name}-${live}`] = await historyBytes(id);
      }
    });
  }
  const streamCost = (name: string) => bytes[`${name}-true`]! - bytes[`${name}-false`]!;
  // What the streamed details add is the same for a 2 KB and a 200 KB answer, and small.
  expect(Math.abs(streamCost('long') - streamCost('short'))).toBeLessThan(1_000);
  expect(Math.abs(streamCost('long'))).toBeLessThan(1_000);
  // The answers' own difference is recorded (the model's answer, the run's result), nothing per character more.
  const growth = bytes['long-true']! - bytes['short-true']!;
  expect(growth).toBeGreaterThan(sizes.long - sizes.short);
  expect(growth).toBeLessThan(3 * (sizes.long - sizes.short));
}, 180_000);
