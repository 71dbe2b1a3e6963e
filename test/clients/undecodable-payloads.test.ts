import { randomBytes, randomUUID } from 'node:crypto';
import { CODEC_KEYS_ENV, parseCodecKeys, workerDataConverterFromEnv } from '../../src/codec';
import { startCodecServer, type CodecServer } from '../../src/codec/server';
import { ScriptedModel, text } from '../../src/models/scripted';
import type { AgentRunResult, EventsPage } from '../../src/shared';
import { createAgentWorker } from '../../src/worker';
import { createDefaultRegistry } from '../../src/tools';
import { connectTestEnv, tempWorkspace, testBundlePath, uniqueQueue, type TestEnv } from '../support/temporal';
import { failedWorkflowTasks, rejection, temporal } from './temporal-cli-helpers';

/**
 * Payloads no converter can decode, sent with the official `temporal` CLI exactly as the hardening
 * finding did (`--input-meta encoding=binary/evil`, and garbage ciphertext for a worker with the
 * encryption codec). Before, one such signal failed every workflow task of the run from then on.
 * Now each is a value the handlers ignore (signals, with a notice) or reject (updates, queries),
 * and such a start input fails the run at once, readably.
 */

let env: TestEnv;
let workspace: string;
let codecServer: CodecServer;
const tag = randomUUID().slice(0, 8);
const id = (label: string) => `undecodable-${tag}-${label}`;

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('undecodable');
  codecServer = await startCodecServer({ port: 0, keys: parseCodecKeys(codecKeys)! });
});
afterAll(async () => {
  await codecServer?.close();
  await env?.close();
});

const codecKeys = `k1:${randomBytes(32).toString('base64')}`;

/**
 * Reads (queries, results) go through the codec server when the worker encrypts, as an operator's
 * CLI would; the hostile sends do not, so their garbage reaches the worker's codec as sent.
 */
let readArgs: string[] = [];

/** `temporal … -o json`, parsed; `workflow result` of a failed run exits 1 and still prints it. */
async function readJson<T>(args: string[], okCodes = [0]): Promise<T> {
  const out = await temporal([...args, ...readArgs, '-o', 'json']);
  if (!okCodes.includes(out.code ?? -1))
    throw new Error(`temporal ${args.join(' ')} exited ${out.code}: ${out.stderr}`);
  return JSON.parse(out.stdout) as T;
}

async function query<T>(workflowId: string, name: string): Promise<T> {
  const answer = await readJson<{ queryResult: T[] }>(['workflow', 'query', '-w', workflowId, '--name', name]);
  return answer.queryResult[0] as T;
}

async function waitForStatus(
  workflowId: string,
  predicate: (state: { status: string; iteration: number }) => boolean,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      last = await query<{ status: string; iteration: number }>(workflowId, 'state');
      if (predicate(last as { status: string; iteration: number })) return;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`state of ${workflowId} never matched; last: ${JSON.stringify(last)}`);
}

/** A worker on a fresh queue; with `codec`, the encryption codec as `durable-agent worker` sets it up. */
async function withWorker<T>(codec: boolean, fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = uniqueQueue('undecodable');
  const model = new ScriptedModel(Array.from({ length: 20 }, (_, i) => text(`answer ${i + 1}`)));
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: createDefaultRegistry() },
    stickyActivities: false,
    ...(codec ? { dataConverter: workerDataConverterFromEnv({ [CODEC_KEYS_ENV]: codecKeys }) } : {}),
  });
  return worker.runUntil(fn(taskQueue));
}

function startSession(workflowId: string, taskQueue: string, ...extra: string[]) {
  const input = JSON.stringify({ prompt: 'hi', workspace, session: true });
  const args = ['workflow', 'start', '--type', 'agentWorkflow', '--task-queue', taskQueue, '-w', workflowId];
  return temporal([...args, '--input', input, ...extra]);
}

const signal = (workflowId: string, name: string, ...extra: string[]) =>
  temporal(['workflow', 'signal', '-w', workflowId, '--name', name, ...extra]);

async function notices(workflowId: string): Promise<string[]> {
  const page = await query<EventsPage>(workflowId, 'events');
  return page.events.flatMap((e) => (e.kind === 'notice' ? [e.message] : []));
}

async function closed(workflowId: string) {
  return readJson<{
    status: string;
    closeEvent: {
      workflowExecutionCompletedEventAttributes?: { result: unknown[] };
      workflowExecutionFailedEventAttributes?: { failure: { message: string; applicationFailureInfo?: unknown } };
    };
  }>(['workflow', 'result', '-w', workflowId], [0, 1]);
}

/** Payloads that the plain worker cannot decode, as the CLI sends them. */
const plainGarbage: Array<{ label: string; args: string[]; shown: string }> = [
  { label: 'unknown encoding', args: ['--input', '"x"', '--input-meta', 'encoding=binary/evil'], shown: 'binary/evil' },
  {
    label: 'json/plain that is not JSON',
    // The CLI checks that json/ input is JSON before it decodes base64: `1234` passes, and decodes to
    // the bytes d7 6d f8, which are neither UTF-8 nor JSON.
    args: ['--input', '1234', '--input-base64'],
    shown: 'json/plain',
  },
];

test.each([false, true])(
  'undecodable signals, updates and queries from the temporal CLI never fail a workflow task (codec: %s)',
  async (codec) => {
    const workflowId = id(`session-${codec ? 'codec' : 'plain'}`);
    const garbage = codec
      ? [
          ...plainGarbage,
          {
            label: 'ciphertext with an unknown key id',
            args: [
              '--input',
              '"x"',
              '--input-meta',
              'encoding=binary/encrypted',
              '--input-meta',
              'encryption-key-id=nope',
            ],
            shown: 'binary/encrypted',
          },
          {
            label: 'altered ciphertext with the right key id',
            args: [
              '--input',
              randomBytes(64).toString('base64'),
              '--input-base64',
              '--input-meta',
              'encoding=binary/encrypted',
              '--input-meta',
              'encryption-key-id=k1',
            ],
            shown: 'binary/encrypted',
          },
        ]
      : plainGarbage;
    readArgs = codec ? ['--codec-endpoint', codecServer.url] : [];
    await withWorker(codec, async (taskQueue) => {
      expect((await startSession(workflowId, taskQueue)).code).toBe(0);
      await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');

      for (const g of garbage) {
        for (const name of ['whatever', 'interrupt']) {
          const sent = await signal(workflowId, name, ...g.args);
          expect({ g: g.label, name, code: sent.code, stderr: sent.stderr }).toEqual({
            g: g.label,
            name,
            code: 0,
            stderr: '',
          });
        }
        const update = await temporal([
          'workflow',
          'update',
          'execute',
          '-w',
          workflowId,
          '--name',
          'sendMessage',
          ...g.args,
        ]);
        expect(update.code).not.toBe(0);
        expect(rejection(update)).toContain('could not be decoded');
        const events = await temporal(['workflow', 'query', '-w', workflowId, '--name', 'events', ...g.args]);
        expect(events.code).not.toBe(0);
        expect(events.stderr).toContain('could not be decoded');
      }

      // The run still answers and still works.
      await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');
      const said = await notices(workflowId);
      for (const g of garbage) {
        expect(said).toContainEqual(
          expect.stringMatching(
            new RegExp(
              `^ignored unknown signal 'whatever'; its argument is a payload that could not be decoded \\(encoding "${g.shown}"`,
            ),
          ),
        );
      }
      expect(
        said.filter((m) => m.startsWith('interrupt ignored: its argument is a payload that could not be decoded')),
      ).toHaveLength(garbage.length);
      const sent = await temporal([
        'workflow',
        'update',
        'execute',
        '-w',
        workflowId,
        '--name',
        'sendMessage',
        '--input',
        '{"message":"again"}',
        ...readArgs,
      ]);
      expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: '' });
      await waitForStatus(workflowId, (s) => s.status === 'awaiting_input' && s.iteration === 2);

      // A later interrupt ends it.
      expect((await signal(workflowId, 'interrupt', '--input', '{"reason":"enough"}')).code).toBe(0);
      const done = await closed(workflowId);
      expect(done.status).toBe('COMPLETED');
      const result = done.closeEvent.workflowExecutionCompletedEventAttributes?.result[0] as AgentRunResult;
      expect(result.exitReason).toBe('interrupted');
      expect(await failedWorkflowTasks(workflowId)).toEqual([]);
    });
  },
  120_000,
);

test.each([false, true])(
  'a start input no converter can decode fails the run at once, non-retryably and readably (codec: %s)',
  async (codec) => {
    readArgs = codec ? ['--codec-endpoint', codecServer.url] : [];
    await withWorker(codec, async (taskQueue) => {
      const cases = [
        ['--input-meta', 'encoding=binary/evil'],
        ...(codec ? [['--input-meta', 'encoding=binary/encrypted', '--input-meta', 'encryption-key-id=k1']] : []),
      ];
      for (const [i, meta] of cases.entries()) {
        const workflowId = id(`start-${codec ? 'codec' : 'plain'}-${i}`);
        expect((await startSession(workflowId, taskQueue, ...meta)).code).toBe(0);
        const done = await closed(workflowId);
        expect(done.status).toBe('FAILED');
        const failure = done.closeEvent.workflowExecutionFailedEventAttributes?.failure;
        expect(failure?.message).toMatch(/^Invalid run input: the input is a payload that could not be decoded/);
        expect(failure?.applicationFailureInfo).toMatchObject({
          type: 'DurableAgent.InvalidInput',
          nonRetryable: true,
        });
        expect(await failedWorkflowTasks(workflowId)).toEqual([]);
      }
    });
  },
  60_000,
);
