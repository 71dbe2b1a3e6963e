/**
 * Issue 11, item 3, inside real runs on a real Temporal server: a hostile glob and hostile greps run
 * as tool calls (local activities, like every glob and grep) while 20 other runs on the same worker
 * keep iterating and `state` queries keep answering. (search-restart.test.ts kills a worker process
 * in the middle of a heavy grep and checks that its replacement does not freeze on replay.)
 */
import { NativeConnection } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { ModelProvider } from '../../src/models/types';
import { text, toolUse } from '../../src/models/scripted';
import { stateQuery, WORKFLOW_TYPE, type AgentRunState, type ModelRequest, type ModelResponse } from '../../src/shared';
import { createGlobTool, createGrepTool, createReadFileTool, ToolRegistry } from '../../src/tools';
import { searchPool } from '../../src/tools/search/pool';
import { createAgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import { toolResults, waitForState } from '../support/run-helpers';
import {
  connectTestEnv,
  tempWorkspace,
  testAddress,
  testBundlePath,
  uniqueQueue,
  type TestEnv,
} from '../support/temporal';

jest.setTimeout(180_000);

const HOSTILE_GLOB = '*a*a*a*a*a*a*a*a*a*a*a*a*b';
const BACKREFERENCE = '(a+)+\\1$';
/** RE2 accepts it but runs it as an NFA on varied text: about 2-3 MB/s, so 40 MiB takes 15 s or more. */
const HEAVY = '[a-p].{20}[a-p].{20}[a-p].{20}Z';
const DEADLINE_MS = 6_000;
const BUSY_RUNS = 20;

/**
 * Plays each run by its prompt: `busy` runs read a file on every turn until `stopBusy`; `hostile`
 * runs make their tool calls once and then answer.
 */
class PromptModel implements ModelProvider {
  readonly name = 'prompt-scripted';
  stopBusy = false;
  /** The last request of each prompt (the hostile runs' second request holds their tool results). */
  readonly lastRequest = new Map<string, ModelRequest>();
  async call(request: ModelRequest): Promise<ModelResponse> {
    const first = request.messages[0];
    const prompt = typeof first?.content === 'string' ? first.content : '';
    this.lastRequest.set(prompt, structuredClone(request));
    const turn = request.messages.length; // 1 on the first call, then 3, 5, …
    const step =
      prompt === 'busy'
        ? this.stopBusy
          ? text('busy done')
          : toolUse([{ id: `toolu_r${turn}`, name: 'read_file', input: { path: 'note.txt' } }])
        : turn > 1
          ? text(`${prompt} done`)
          : toolUse(
              prompt === 'hostile-glob'
                ? [{ id: 'toolu_glob', name: 'glob', input: { pattern: HOSTILE_GLOB } }]
                : [
                    { id: 'toolu_backref', name: 'grep', input: { pattern: BACKREFERENCE } },
                    {
                      id: 'toolu_heavy',
                      name: 'grep',
                      input: { pattern: HEAVY, path: 'slow.txt', output_mode: 'count' },
                    },
                  ],
            );
    return {
      id: `msg_${prompt}_${turn}`,
      model: request.model,
      content: step.content as ModelResponse['content'],
      stopReason: step.stopReason ?? 'end_turn',
      usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    };
  }
}

let env: TestEnv;
let workspace: string;

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('search');
  await fs.writeFile(path.join(workspace, 'note.txt'), 'a note\n');
  await fs.writeFile(path.join(workspace, `${'a'.repeat(200)}.txt`), `${'a'.repeat(40)}!\n`);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz     ';
  const block = randomBytes(4 * 1024 * 1024);
  for (let i = 0; i < block.length; i++) {
    block[i] = i % 200 === 199 ? 0x0a : alphabet.charCodeAt((block[i] as number) % alphabet.length);
  }
  await fs.writeFile(path.join(workspace, 'slow.txt'), Buffer.concat(Array.from({ length: 10 }, () => block)));
});
afterAll(async () => {
  await env?.close();
  if (workspace) await fs.rm(workspace, { recursive: true, force: true });
});

function registry(): ToolRegistry {
  return new ToolRegistry([
    createReadFileTool(),
    createGlobTool({ deadlineMs: DEADLINE_MS }),
    createGrepTool({ deadlineMs: DEADLINE_MS }),
  ]);
}

async function startWorker(taskQueue: string, model: ModelProvider, connection: NativeConnection) {
  return createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: registry() },
    stickyActivities: false,
    shutdownGraceTime: '1 second',
  });
}

let counter = 0;
function start(taskQueue: string, prompt: string) {
  return env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `search-${prompt}-${Date.now()}-${++counter}`,
    args: [{ prompt, model: 'scripted-test', workspace, maxIterations: 10_000, tools: ['read_file', 'glob', 'grep'] }],
  });
}

type Handle = Awaited<ReturnType<typeof start>>;

/** Every run's `state`, each query failing the test if it takes longer than `withinMs`. */
async function statesWithin(handles: Handle[], withinMs: number): Promise<AgentRunState[]> {
  return Promise.all(
    handles.map(async (h) => {
      const startedAt = Date.now();
      const state = await Promise.race([
        h.query(stateQuery),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`state query of ${h.workflowId} took over ${withinMs} ms`)), withinMs),
        ),
      ]);
      expect(Date.now() - startedAt).toBeLessThan(withinMs);
      return state;
    }),
  );
}

/**
 * Resolves once a search thread of this process is busy. The run's own `state` cannot show it: a
 * local activity runs inside the workflow task, and the server holds queries to that run until the
 * task completes (at the latest at the search deadline).
 */
async function heavyGrepRunning(): Promise<void> {
  for (const deadline = Date.now() + 30_000; searchPool().busy === 0;) {
    if (Date.now() > deadline) throw new Error('the heavy grep never started');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The tool results the model received after the hostile run's one tool turn. */
function hostileResults(model: PromptModel, prompt: string) {
  return toolResults(model.lastRequest.get(prompt)?.messages[2]).map((r) => ({
    id: r.tool_use_id,
    isError: r.is_error === true,
    content: typeof r.content === 'string' ? r.content : JSON.stringify(r.content),
  }));
}

const STOPPED =
  `Error: grep was stopped after ${DEADLINE_MS / 1000} seconds, its time limit, before it finished. ` +
  'Search a smaller part of the workspace (path, glob) or use a more specific pattern.';

test('a hostile glob and hostile greps run while 20 other runs keep iterating and queries answer', async () => {
  const model = new PromptModel();
  const connection = await NativeConnection.connect({ address: testAddress() });
  const taskQueue = uniqueQueue('search');
  const worker = await startWorker(taskQueue, model, connection);
  try {
    await worker.runUntil(async () => {
      const busy = await Promise.all(Array.from({ length: BUSY_RUNS }, () => start(taskQueue, 'busy')));
      await Promise.all(busy.map((h) => waitForState(h, (s) => s.iteration >= 2, 60_000)));

      const glob = await start(taskQueue, 'hostile-glob');
      const grep = await start(taskQueue, 'hostile-grep');
      // The heavy grep is in flight in a search thread of this process.
      await heavyGrepRunning();
      const before = await statesWithin(busy, 5_000);
      await new Promise((r) => setTimeout(r, 2_000));
      const during = await statesWithin(busy, 5_000);
      // Still inside the heavy grep (its deadline has not passed), every other run moved on.
      expect(searchPool().busy).toBeGreaterThan(0);
      for (let i = 0; i < BUSY_RUNS; i++) {
        expect((during[i] as AgentRunState).iteration).toBeGreaterThan((before[i] as AgentRunState).iteration);
      }

      const [globResult, grepResult] = await Promise.all([glob.result(), grep.result()]);
      expect(globResult).toMatchObject({ exitReason: 'completed', finalText: 'hostile-glob done' });
      expect(grepResult).toMatchObject({ exitReason: 'completed', finalText: 'hostile-grep done' });
      expect(hostileResults(model, 'hostile-glob')).toEqual([
        { id: 'toolu_glob', isError: false, content: `No files match '${HOSTILE_GLOB}' in the workspace root.` },
      ]);
      const [backref, heavy] = hostileResults(model, 'hostile-grep');
      expect(backref).toMatchObject({ id: 'toolu_backref', isError: true });
      expect(backref?.content).toMatch(/was refused: back-references \(\\1\) are not supported\. grep uses RE2/);
      expect(heavy).toEqual({ id: 'toolu_heavy', isError: true, content: STOPPED });

      model.stopBusy = true;
      for (const r of await Promise.all(busy.map((h) => h.result()))) expect(r.exitReason).toBe('completed');
    });
  } finally {
    await connection.close();
  }
});
