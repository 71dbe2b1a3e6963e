import { Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, type DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CODEC_KEYS_ENV, FAILURE_CONVERTER_PATH, dataConverterFromEnv, parseCodecKeys } from '../../src/codec';
import { startCodecServer } from '../../src/codec/server';
import { found, plainPayloadPaths, rawHistory } from './raw-history';
import { getRun, runResult, startRun } from '../../src/client';
import { ScriptedModel, fail, text, toolUse } from '../../src/models/scripted';
import { ErrorTypes } from '../../src/shared/constants';
import { ToolRegistry, createBuiltinTools, type Tool } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { eventually } from '../support/run-helpers';
import {
  connectTestEnv,
  tempWorkspace,
  testAddress,
  testBundlePath,
  uniqueQueue,
  type TestEnv,
} from '../support/temporal';

const execFileAsync = promisify(execFile);

function testCli(): string {
  const cli = process.env.DA_TEST_TEMPORAL_CLI;
  if (!cli) throw new Error('DA_TEST_TEMPORAL_CLI is not set: run the suite with `npm test`.');
  return cli;
}

/**
 * With DURABLE_AGENT_CODEC_KEYS set, a real worker and client (real dev server, real tools) leave no
 * plaintext of the prompt, the tool inputs and outputs, the model's answers or error messages in the
 * raw event history, as the server stores it. The same scenario without the codec is the control:
 * there every marker IS in the raw bytes, so the check can fail.
 */

const unique = () => randomBytes(6).toString('hex');

/** Every marker a run puts into history: prompt (both lines), tool inputs and outputs, errors, answers. */
function markersFor(tag: string) {
  const id = unique();
  return {
    promptFirstLine: `PROMPT-HEAD-${tag}-${id}`,
    promptRest: `PROMPT-TAIL-${tag}-${id}`,
    fileContent: `FILE-CONTENT-${tag}-${id}`,
    // The command computes its output, so the output marker is not in the command text.
    bashCommand: `BASH-CMD-${tag}-${id}`,
    bashOutput: `BASH-OUT-42-${tag}-${id}`,
    localToolError: `LOCAL-TOOL-THREW-${tag}-${id}`,
    toolError: `TOOL-THREW-${tag}-${id}`,
    thinking: `MODEL-TEXT-${tag}-${id}`,
    answer: `FINAL-ANSWER-${tag}-${id}`,
    modelFailure: `MODEL-FAILURE-${tag}-${id}`,
  };
}
type Markers = ReturnType<typeof markersFor>;

/** The built-in tools, with grep (a local activity) and write_file (an activity) replaced by ones that throw. */
function throwingRegistry(m: Markers): ToolRegistry {
  const tools = createBuiltinTools();
  const throwing = (name: string, message: string): Tool => {
    const original = tools.find((t) => t.name === name)!;
    return {
      ...original,
      async execute() {
        throw new Error(message);
      },
    };
  };
  return new ToolRegistry(
    tools.map((t) =>
      t.name === 'grep'
        ? throwing('grep', m.localToolError)
        : t.name === 'write_file'
          ? throwing('write_file', m.toolError)
          : t,
    ),
  );
}

interface Scenario {
  completedId: string;
  failedId: string;
  markers: Markers;
  client: Client;
}

/**
 * Two runs on a worker and client built with `dataConverter`: one that reads a file, runs bash, has
 * two tools throw and answers; one whose model call fails for good (the run ends Failed).
 */
async function runScenario(
  env: TestEnv,
  tag: string,
  dataConverter: DataConverter | undefined,
  bundle: string,
): Promise<Scenario> {
  const m = markersFor(tag);
  const workspace = await tempWorkspace('codec');
  await fs.writeFile(path.join(workspace, 'notes.txt'), `${m.fileContent}\n`);
  const model = new ScriptedModel([
    toolUse(
      [
        { name: 'read_file', input: { path: 'notes.txt' } },
        {
          name: 'bash',
          input: { command: `echo BASH-OUT-$((40+2))-${m.bashOutput.slice('BASH-OUT-42-'.length)} # ${m.bashCommand}` },
        },
        { name: 'grep', input: { pattern: 'x' } },
        { name: 'write_file', input: { path: 'out.txt', content: 'y' } },
      ],
      { text: m.thinking },
    ),
    text(m.answer),
    fail(ApplicationFailure.nonRetryable(m.modelFailure, ErrorTypes.BadRequest)),
  ]);
  const client = new Client({ connection: env.connection, ...(dataConverter ? { dataConverter } : {}) });
  const taskQueue = uniqueQueue(`codec-${tag}`);
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: bundle,
    deps: { models: () => model, tools: throwingRegistry(m) },
    stickyActivities: false,
    ...(dataConverter ? { workerOptions: { dataConverter } } : {}),
  });
  const completedId = `codec-${tag}-ok-${unique()}`;
  const failedId = `codec-${tag}-fail-${unique()}`;
  await worker.runUntil(async () => {
    const ok = await startRun(
      client,
      { prompt: `${m.promptFirstLine}\n${m.promptRest}`, model: 'scripted-codec', workspace },
      { workflowId: completedId, taskQueue },
    );
    const result = await runResult(ok);
    // The codec round-trips: the client reads what the worker wrote, and the tools really ran.
    expect(result.exitReason).toBe('completed');
    expect(result.finalText).toContain(m.answer);
    const toolResults = JSON.stringify(model.requests[1]?.messages.at(-1));
    for (const marker of [m.fileContent, m.bashOutput, m.localToolError, m.toolError]) {
      expect(toolResults).toContain(marker);
    }
    const failing = await startRun(
      client,
      { prompt: m.promptFirstLine, model: 'scripted-codec', workspace },
      { workflowId: failedId, taskQueue },
    );
    const error = await failing.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    // Decoded on the client: the reason is readable again.
    expect(JSON.stringify((error as WorkflowFailedError).cause?.message) + String((error as Error).cause)).toContain(
      m.modelFailure,
    );
  });
  return { completedId, failedId, markers: m, client };
}

describe('encrypted payloads in a real event history', () => {
  let env: TestEnv;
  let codecBundle: string;
  const codecEnv = {
    [CODEC_KEYS_ENV]: `now:${randomBytes(32).toString('base64')},before:${randomBytes(32).toString('base64')}`,
  };

  beforeAll(async () => {
    env = await connectTestEnv();
    // A worker with the codec needs its workflows bundled with the failure converter: failures
    // raised by workflow code (the run's own failure) are converted inside the sandbox.
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.resolve(__dirname, '..', '..', 'src', 'workflows'),
      failureConverterPath: FAILURE_CONVERTER_PATH,
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-codec-bundle-'));
    codecBundle = path.join(dir, 'workflow-bundle.js');
    await fs.writeFile(codecBundle, code);
  }, 180_000);
  afterAll(() => env?.close());

  test('control: without the codec, every marker is plaintext in the raw history', async () => {
    const { completedId, failedId, markers, client } = await runScenario(env, 'plain', undefined, testBundlePath());
    const raw = Buffer.concat([await rawHistory(client, completedId), await rawHistory(client, failedId)]);
    expect(found(raw, markers).sort()).toEqual(Object.keys(markers).sort());
  }, 120_000);

  test('with the codec: no marker of prompt, tools, answers or failures in the raw history; search attributes stay readable', async () => {
    const dataConverter = dataConverterFromEnv(codecEnv);
    expect(dataConverter).toBeDefined();
    const { completedId, failedId, markers, client } = await runScenario(env, 'sealed', dataConverter, codecBundle);
    const completedRaw = await rawHistory(client, completedId);
    const failedRaw = await rawHistory(client, failedId);
    expect(found(Buffer.concat([completedRaw, failedRaw]), markers)).toEqual([]);

    // Failures are there, with their messages moved into the (encrypted) encoded attributes.
    const failedEvents = temporal.api.history.v1.History.decode(failedRaw).events;
    const ended = failedEvents.find((e) => e.workflowExecutionFailedEventAttributes);
    expect(ended?.workflowExecutionFailedEventAttributes?.failure?.message).toBe('Encoded failure');
    const activityFailed = failedEvents.find((e) => e.activityTaskFailedEventAttributes);
    expect(activityFailed?.activityTaskFailedEventAttributes?.failure?.message).toBe('Encoded failure');
    // Every payload in the history is encrypted: the only encoding left in plaintext is binary/encrypted.
    // Every payload in the history is encrypted except what is no user data: search attributes,
    // patch markers (a code version name) and the bookkeeping Core writes on a local activity's
    // marker (sequence number, attempt, times; its result is encrypted).
    const completedEvents = temporal.api.history.v1.History.decode(completedRaw).events;
    const plain = plainPayloadPaths(completedEvents);
    const allowed = [
      /^\.\d+\.upsertWorkflowSearchAttributesEventAttributes\.searchAttributes\.indexedFields\.\w+$/,
      // The ones the client sets at start (status, iterations, model, cost): search attributes too.
      /^\.0\.workflowExecutionStartedEventAttributes\.searchAttributes\.indexedFields\.DurableAgent\w+$/,
      /^\.\d+\.markerRecordedEventAttributes\.details\.patch-data\.payloads\.0$/,
      /^\.\d+\.markerRecordedEventAttributes\.details\.data\.payloads\.0$/,
    ];
    expect(plain.filter((p) => !allowed.some((rule) => rule.test(p)))).toEqual([]);
    const localActivityData = completedEvents
      .map((e) => e.markerRecordedEventAttributes?.details?.data?.payloads?.[0])
      .filter((p) => p !== undefined && p !== null);
    expect(localActivityData.length).toBeGreaterThan(0);
    for (const payload of localActivityData) {
      expect(Object.keys(defaultPayloadConverter.fromPayload(payload) as object).sort()).toEqual(
        ['activity_id', 'activity_type', 'attempt', 'backoff', 'complete_time', 'original_schedule_time', 'seq'].sort(),
      );
    }
    expect(completedRaw.includes('binary/encrypted')).toBe(true);

    // Search attributes are not payloads the codec touches: the server (and list filters) read them.
    const described = await client.workflowService.describeWorkflowExecution({
      namespace: 'default',
      execution: { workflowId: completedId },
    });
    const fields = described.workflowExecutionInfo?.searchAttributes?.indexedFields ?? {};
    expect(defaultPayloadConverter.fromPayload(fields.DurableAgentStatus!)).toBe('completed');
    expect(defaultPayloadConverter.fromPayload(fields.DurableAgentModel!)).toBe('scripted-codec');
    // Visibility catches up with the run shortly after it ends.
    await eventually(
      async () => {
        const ids: string[] = [];
        const query = `WorkflowId = '${completedId}' AND DurableAgentStatus = 'completed'`;
        for await (const info of client.workflow.list({ query })) ids.push(info.workflowId);
        return ids;
      },
      (ids) => expect(ids).toEqual([completedId]),
    );
    // Temporal's own CLI reads the history through the codec server, and only through it.
    const codecServer = await startCodecServer({ port: 0, keys: parseCodecKeys(codecEnv[CODEC_KEYS_ENV])! });
    try {
      const show = (...extra: string[]) =>
        execFileAsync(
          testCli(),
          ['workflow', 'show', '--address', testAddress(), '--workflow-id', completedId, '--output', 'json', ...extra],
          { maxBuffer: 64 * 1024 * 1024 },
        ).then((r) => r.stdout);
      // The CLI prints payloads as protobuf JSON: their data base64-encoded.
      const payloadTexts = (json: string) =>
        [...json.matchAll(/"data":\s*"([A-Za-z0-9+/=]*)"/g)]
          .map((m) => Buffer.from(m[1]!, 'base64').toString())
          .join('\n');
      const decoded = payloadTexts(await show('--codec-endpoint', codecServer.url));
      for (const marker of [markers.promptRest, markers.fileContent, markers.bashOutput, markers.answer]) {
        expect(decoded).toContain(marker);
      }
      const undecoded = await show();
      expect(found(Buffer.from(`${undecoded}\n${payloadTexts(undecoded)}`), markers)).toEqual([]);
    } finally {
      await codecServer.close();
    }
    // The summary (the prompt's first line) is encrypted too, yet the client decodes it.
    const description = await getRun(client, completedId).describe();
    expect(await description.staticSummary()).toContain(markers.promptFirstLine);
  }, 180_000);
});
