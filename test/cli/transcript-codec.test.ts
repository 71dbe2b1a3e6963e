import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { randomBytes } from 'node:crypto';
import { AesGcmCodec, parseCodecKeys } from '../../src/codec';
import { transcriptCommand, type Transcript } from '../../src/cli/transcript';
import { UndecodablePayload } from '../../src/client/transcript/history';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { WORKFLOW_TYPE } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import { connectTestEnv, tempWorkspace, testBundlePath, uniqueQueue, type TestEnv } from '../support/temporal';

/**
 * A run recorded with an encryption codec reads back through a client that has the codec (the
 * transcript decodes with the client's own data converter), and a client without the key says so
 * in one line instead of printing ciphertext.
 */
let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

test('an encrypted run reads back with the codec, and without the key the reason is one readable line', async () => {
  const keys = parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`)!;
  const dataConverter: DataConverter = { payloadCodecs: [new AesGcmCodec(keys)] };
  const secret = `SECRET-${randomBytes(4).toString('hex')}`;
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_g', name: 'glob', input: { pattern: '*' } }], { text: secret }),
    text(`done ${secret}`),
  ]);
  const taskQueue = uniqueQueue('transcript-codec');
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: createDefaultRegistry() },
    stickyActivities: false,
    workerOptions: { dataConverter },
  });
  const client = new Client({ connection: env.connection, dataConverter });
  const workflowId = `transcript-codec-${randomBytes(4).toString('hex')}`;
  await worker.runUntil(async () => {
    const handle = await client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId,
      args: [{ prompt: `find ${secret}`, model: 'scripted-test', workspace: await tempWorkspace('codec-t') }],
    });
    await handle.result();
  });

  let json = '';
  await transcriptCommand(client, workflowId, { json: true }, (c) => (json += c));
  const transcript = JSON.parse(json) as Transcript;
  expect(transcript.messages).toEqual([
    ...model.requests[1]!.messages,
    { role: 'assistant', content: [{ type: 'text', text: `done ${secret}` }] },
  ]);
  expect(transcript.messages[0]).toEqual({ role: 'user', content: `find ${secret}` });

  const plain = new Client({ connection: env.connection });
  const refused = transcriptCommand(plain, workflowId, { json: true }, () => {});
  await expect(refused).rejects.toBeInstanceOf(UndecodablePayload);
  await expect(refused).rejects.toThrow(/DURABLE_AGENT_CODEC_KEYS/);
});
