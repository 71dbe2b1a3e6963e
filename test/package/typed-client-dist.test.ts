/**
 * The typed client as an application of its own writes it, against the built package (dist/, what
 * `npm pack` ships; `npm run build` first): a file outside the repository that imports from
 * `durable-agent` type-checks against the package's declarations (a wrong field of the typed
 * answer is a compile error), then runs end to end on the test's Temporal server with a model
 * provider of the application's own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tempWorkspace, testAddress, testBundlePath, uniqueQueue } from '../support/temporal';

jest.setTimeout(180_000);

const repo = path.resolve(__dirname, '..', '..');
let app: string;

const USER_PROGRAM = `
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { AgentPlugin, AgentRun, RunRefusedError, typedOutput, type ModelProvider } from 'durable-agent';

const City = z.object({ city: z.string(), population: z.number().int() });

/** The application's own model: answers with a JSON text. */
const model: ModelProvider = {
  name: 'mine',
  async call(request) {
    return {
      id: 'msg_1',
      model: request.model,
      content: [{ type: 'text', text: '{"city": "Lyon", "population": 522250}' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    };
  },
};

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS!;
  const taskQueue = process.env.APP_TASK_QUEUE!;
  const plugin = new AgentPlugin({ models: () => model, workspace: process.env.APP_WORKSPACE! });
  const native = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: native,
    taskQueue,
    workflowBundle: { codePath: process.env.APP_BUNDLE! },
    plugins: [plugin],
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, plugins: [plugin] });
  const out = await worker.runUntil(async () => {
    const run = await AgentRun.start(client, { prompt: 'Which city?', model: 'mine', outputSchema: City }, { taskQueue });
    const city = await run.output();
    const population: number = city.population;
    const result = await run.result({ messages: true });
    const late = await run.send('one more thing').catch((e: unknown) => e);
    return {
      city: city.city,
      population,
      exitReason: result.exitReason,
      typed: typedOutput(result, City).population,
      messages: result.messages.map((m) => m.role),
      late: late instanceof RunRefusedError ? late.message : String(late),
    };
  });
  console.log(JSON.stringify(out));
  await connection.close();
  await native.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

/** The same program with a field the schema does not have: the package's types must refuse it. */
const WRONG_FIELD = `
import { Client } from '@temporalio/client';
import { z } from 'zod';
import { AgentRun } from 'durable-agent';
const City = z.object({ city: z.string() });
export async function f(client: Client): Promise<string> {
  const run = await AgentRun.start(client, { prompt: 'x', outputSchema: City }, { taskQueue: 'q' });
  return (await run.output()).mayor;
}
`;

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(cmd, args, { cwd: app, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
}

beforeAll(() => {
  const built = path.join(repo, 'dist', 'src', 'index.js');
  if (
    !existsSync(built) ||
    statSync(built).mtimeMs < statSync(path.join(repo, 'src', 'plugin', 'agent-run.ts')).mtimeMs
  ) {
    throw new Error('dist/ is missing or older than src/plugin/agent-run.ts: run `npm run build` first');
  }
  app = mkdtempSync(path.join(os.tmpdir(), 'da-typed-client-'));
  // The application's node_modules: the package (its package.json, dist/) and what the application uses itself.
  mkdirSync(path.join(app, 'node_modules'));
  symlinkSync(repo, path.join(app, 'node_modules', 'durable-agent'));
  for (const dep of ['@temporalio', 'zod', '@types']) {
    symlinkSync(path.join(repo, 'node_modules', dep), path.join(app, 'node_modules', dep));
  }
  const compilerOptions = {
    target: 'ES2022',
    module: 'node16',
    moduleResolution: 'node16',
    strict: true,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ['node'],
    outDir: 'lib',
  };
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'typed-client-app', private: true }));
  writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['main.ts'] }));
  writeFileSync(path.join(app, 'main.ts'), USER_PROGRAM);
  writeFileSync(path.join(app, 'tsconfig.wrong.json'), JSON.stringify({ compilerOptions, files: ['wrong.ts'] }));
  writeFileSync(path.join(app, 'wrong.ts'), WRONG_FIELD);
});

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

const tsc = path.join(repo, 'node_modules', 'typescript', 'bin', 'tsc');

test("the package's types give the answer the zod schema's type: a field it lacks does not compile", () => {
  const wrong = run(process.execPath, [tsc, '-p', 'tsconfig.wrong.json', '--noEmit']);
  expect(wrong.status).not.toBe(0);
  expect(wrong.stdout).toMatch(/wrong\.ts.*Property 'mayor' does not exist/);
});

test('an application compiles against the built package and gets a typed answer end to end', async () => {
  const compiled = run(process.execPath, [tsc, '-p', 'tsconfig.json']);
  expect(compiled.stdout + compiled.stderr).toBe('');
  expect(compiled.status).toBe(0);
  const workspace = await tempWorkspace('typed-client');
  const out = run(process.execPath, [path.join(app, 'lib', 'main.js')], {
    TEMPORAL_ADDRESS: testAddress(),
    APP_TASK_QUEUE: uniqueQueue('typed-client'),
    APP_BUNDLE: testBundlePath(),
    APP_WORKSPACE: workspace,
    DURABLE_AGENT_CODEC_KEYS: '',
  });
  if (out.status !== 0) throw new Error(`the application failed (${out.status}):\n${out.stdout}\n${out.stderr}`);
  const result = JSON.parse(out.stdout.trim().split('\n').at(-1)!);
  expect(result).toMatchObject({
    city: 'Lyon',
    population: 522250,
    exitReason: 'completed',
    typed: 522250,
    messages: ['user', 'assistant'],
  });
  expect(result.late).toMatch(/has already ended \('completed'\)/);
});
