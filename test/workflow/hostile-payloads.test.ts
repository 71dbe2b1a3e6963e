import { Client, WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, METADATA_ENCODING_KEY, RawValue, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { AesGcmCodec, CODEC_KEYS_ENV, parseCodecKeys, workerDataConverterFromEnv } from '../../src/codec';
import { ScriptedModel, text } from '../../src/models/scripted';
import { ErrorTypes, WORKFLOW_TYPE, endSessionUpdate, stateQuery } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import { testBundlePath, uniqueQueue } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * Raw payloads with random metadata and bytes (what any client can put on the wire, below every
 * SDK's converter) to every handler of a live run and as start inputs, for a plain worker and one
 * with the encryption codec: no workflow task ever fails, and the run still ends normally.
 */
const { suite } = useWorkflowSuite('hostile-payloads');

const EventType = temporal.api.enums.v1.EventType;
type Handle = WorkflowHandle<typeof agentWorkflow>;
const utf8 = (s: string) => Buffer.from(s, 'utf8');

/**
 * With `codec`, the worker encrypts, and the client reads what it writes but sends its raw payloads
 * as they are: garbage ciphertext reaches the worker's codec unaltered.
 */
async function withWorker<T>(codec: boolean, fn: (taskQueue: string, client: Client) => Promise<T>): Promise<T> {
  const taskQueue = uniqueQueue('hostile-payloads');
  const model = new ScriptedModel(Array.from({ length: 500 }, () => text('ok')));
  const keys = `k1:${randomBytes(32).toString('base64')}`;
  const reader = new AesGcmCodec(parseCodecKeys(keys)!);
  const client = codec
    ? new Client({
        connection: suite.env.connection,
        dataConverter: { payloadCodecs: [{ encode: async (p) => p, decode: (p) => reader.decode(p) }] },
      })
    : suite.env.client;
  const worker = await createAgentWorker({
    connection: suite.env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: createDefaultRegistry() },
    stickyActivities: false,
    ...(codec ? { dataConverter: workerDataConverterFromEnv({ [CODEC_KEYS_ENV]: keys }) } : {}),
  });
  return worker.runUntil(fn(taskQueue, client));
}

/** A payload as a hostile client may send it: any encoding (known ones with wrong bytes), any extra metadata. */
const rawPayload: fc.Arbitrary<Payload> = fc
  .record({
    encoding: fc.option(
      fc.oneof(
        fc.constantFrom(
          'json/plain',
          'binary/null',
          'binary/plain',
          'json/protobuf',
          'binary/protobuf',
          'binary/encrypted',
        ),
        fc.string({ maxLength: 40 }),
      ),
      { nil: undefined },
    ),
    keyId: fc.option(fc.constantFrom('k1', 'nope', ''), { nil: undefined }),
    messageType: fc.option(fc.string({ maxLength: 30 }), { nil: undefined }),
    data: fc.oneof(
      fc.uint8Array({ maxLength: 80 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => utf8(JSON.stringify(v) ?? 'null')),
      fc.constant(utf8('[[[[[[[[')),
    ),
  })
  .map(({ encoding, keyId, messageType, data }) => ({
    metadata: {
      ...(encoding !== undefined ? { [METADATA_ENCODING_KEY]: utf8(encoding) } : {}),
      ...(keyId !== undefined ? { 'encryption-key-id': utf8(keyId) } : {}),
      ...(messageType !== undefined ? { messageType: utf8(messageType) } : {}),
    },
    data,
  }));

const command = fc.record({
  kind: fc.constantFrom('signal', 'update', 'query'),
  name: fc.constantFrom('sendMessage', 'approveTool', 'denyTool', 'endSession', 'interrupt', 'state', 'events', 'nope'),
  payload: rawPayload,
});
type Command = typeof command extends fc.Arbitrary<infer T> ? T : never;

async function send(handle: Handle, c: Command): Promise<void> {
  const arg = RawValue.fromPayload(c.payload);
  try {
    if (c.kind === 'signal') await (handle.signal as (n: string, a: unknown) => Promise<void>)(c.name, arg);
    else if (c.kind === 'update') await handle.executeUpdate(c.name, { args: [arg] });
    else await handle.query<unknown, unknown[]>(c.name, arg);
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return;
    const message = String((err as Error).message);
    // A query the workflow rejects, or a name it does not register: Temporal answers, the run goes on.
    if (/could not be decoded|did not register|not found|unknown|QueryNotRegistered|completed|closed/i.test(message))
      return;
    throw err;
  }
}

async function failedTasks(handle: Handle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length;
}

/** Ends a session that waits for input; returns its exit reason. */
async function endSession(handle: Handle): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const state = await handle.query(stateQuery);
    if (state.status === 'awaiting_input') {
      await handle.executeUpdate(endSessionUpdate, { args: [{}] }).catch(() => undefined);
    }
    const done = await Promise.race([
      handle.result().then((r) => r.exitReason),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 200)),
    ]);
    if (done) return done;
  }
  throw new Error('the session did not end');
}

test.each([false, true])(
  'random raw payloads to every handler of a live session: no workflow task fails and it ends normally (codec: %s)',
  async (codec) => {
    let runs = 0;
    await withWorker(codec, async (taskQueue, client) => {
      await fc.assert(
        fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 20 }), async (commands) => {
          const handle = await client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
            taskQueue,
            workflowId: `hostile-payloads-${codec}-${Date.now()}-${++runs}`,
            args: [{ prompt: 'work', model: 'scripted-test', workspace: suite.workspace, session: true }],
          });
          for (const c of commands) await send(handle, c);
          // A raw `interrupt` may have stopped it (any decodable argument reads as a request to stop).
          expect(['completed', 'interrupted']).toContain(await endSession(handle));
          expect(await failedTasks(handle)).toBe(0);
        }),
        { numRuns: 6, seed: 20261125, endOnFailure: true },
      );
    });
  },
  240_000,
);

test.each([false, true])(
  'random raw payloads as the start input: each run runs or fails at once as invalid input (codec: %s)',
  async (codec) => {
    let runs = 0;
    await withWorker(codec, async (taskQueue, client) => {
      await fc.assert(
        fc.asyncProperty(rawPayload, async (payload) => {
          const handle = (await client.workflow.start(WORKFLOW_TYPE, {
            taskQueue,
            workflowId: `hostile-start-${codec}-${Date.now()}-${++runs}`,
            args: [RawValue.fromPayload(payload)],
          })) as Handle;
          const outcome = await handle.result().then(
            (r) => r.exitReason,
            (err: unknown) => err,
          );
          if (typeof outcome !== 'string') {
            expect(outcome).toBeInstanceOf(WorkflowFailedError);
            const cause = (outcome as WorkflowFailedError).cause;
            expect(cause).toBeInstanceOf(ApplicationFailure);
            expect((cause as ApplicationFailure).type).toBe(ErrorTypes.InvalidInput);
            expect((cause as ApplicationFailure).nonRetryable).toBe(true);
          }
          expect(await failedTasks(handle)).toBe(0);
        }),
        { numRuns: 15, seed: 20261125, endOnFailure: true },
      );
    });
  },
  240_000,
);
