/**
 * The package as a Temporal user gets it: `npm pack` of this checkout, installed from the tarball
 * into a project outside the repository (examples/agent-in-your-app), type-checked against the
 * installed types, and run end to end on the test's Temporal server with the fake Anthropic API:
 * the user's worker with the plugin and a tool of its own, a parent workflow that runs the agent as
 * a child, a client that starts, follows and queries a run.
 */
import { Client, Connection } from '@temporalio/client';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFakeAnthropic, message, type FakeAnthropic } from '../support/fake-anthropic';
import { testAddress, uniqueQueue } from '../support/temporal';

const repo = path.resolve(__dirname, '..', '..');
const example = path.join(repo, 'examples', 'agent-in-your-app');
jest.setTimeout(15 * 60_000);

let tmp: string;
let app: string;
let fake: FakeAnthropic;
let worker: ChildProcess | undefined;

function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The checkout's files (tracked and new, not ignored), copied so packing builds there, not in this tree. */
function copyCheckout(to: string): void {
  const files = sh('git', ['ls-files', '-co', '--exclude-standard'], repo).split('\n').filter(Boolean);
  for (const file of files) {
    if (file === 'node_modules' || !existsSync(path.join(repo, file))) continue;
    mkdirSync(path.dirname(path.join(to, file)), { recursive: true });
    cpSync(path.join(repo, file), path.join(to, file));
  }
  symlinkSync(path.join(repo, 'node_modules'), path.join(to, 'node_modules'));
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'da-packed-'));
  const checkout = path.join(tmp, 'checkout');
  copyCheckout(checkout);
  // `npm pack` runs `prepack` (the build): the tarball must carry dist/ itself.
  const packed = sh('npm', ['pack', '--silent', '--pack-destination', tmp], checkout).trim().split('\n').pop()!;
  const tarball = path.join(tmp, packed);

  app = path.join(tmp, 'app');
  cpSync(example, app, { recursive: true, filter: (src) => !/[/\\](node_modules|lib)$/.test(src) });
  const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8'));
  manifest.dependencies['durable-agent'] = `file:${tarball}`;
  writeFileSync(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  // From the npm cache the repository's install filled (the registry only for what it lacks). Install
  // scripts are skipped: the one native build (re2) is the repository's, of the same version.
  sh('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], app);
  const re2 = path.join(app, 'node_modules', 're2');
  const ours = JSON.parse(readFileSync(path.join(repo, 'node_modules', 're2', 'package.json'), 'utf8')).version;
  const theirs = JSON.parse(readFileSync(path.join(re2, 'package.json'), 'utf8')).version;
  expect(theirs).toBe(ours);
  cpSync(path.join(repo, 'node_modules', 're2', 'build'), path.join(re2, 'build'), { recursive: true });
  fake = await startFakeAnthropic();
});

afterAll(async () => {
  if (worker && worker.exitCode === null) worker.kill('SIGKILL');
  await fake?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('the tarball holds the compiled package and its entries resolve from an outside project', () => {
  const installed = path.join(app, 'node_modules', 'durable-agent');
  expect(existsSync(path.join(installed, 'dist', 'src', 'index.js'))).toBe(true);
  expect(existsSync(path.join(installed, 'dist', 'src', 'workflow.d.ts'))).toBe(true);
  expect(existsSync(path.join(installed, 'src'))).toBe(false);
  // The inspector's page ships compiled beside its server (`durable-agent ui`), nothing from a CDN.
  expect(existsSync(path.join(installed, 'dist', 'src', 'inspector', 'web', 'index.html'))).toBe(true);
  expect(existsSync(path.join(installed, 'dist', 'src', 'inspector', 'web', 'app.js'))).toBe(true);
  // One @temporalio/workflow: the user's (peer dependency), none nested under the package.
  expect(existsSync(path.join(installed, 'node_modules', '@temporalio'))).toBe(false);
  const probe = `const a=require('durable-agent');const w=require('durable-agent/workflow');
    console.log(JSON.stringify({plugin:typeof a.AgentPlugin,run:typeof a.AgentRun,tool:typeof a.defineTool,
    wf:typeof w.agentWorkflow,defs:[w.interruptSignal,w.stateQuery,w.eventsQuery,w.sendMessageUpdate,
    w.approveToolUpdate,w.denyToolUpdate,w.endSessionUpdate].map((d)=>d.name)}))`;
  expect(JSON.parse(sh('node', ['-e', probe], app))).toEqual({
    plugin: 'function',
    run: 'function',
    tool: 'function',
    wf: 'function',
    defs: ['interrupt', 'state', 'events', 'sendMessage', 'approveTool', 'denyTool', 'endSession'],
  });
  expect(sh('npx', ['--no-install', 'durable-agent', '--help'], app)).toMatch(/durable-agent/);
  expect(sh('npx', ['--no-install', 'durable-agent', 'ui', '--help'], app)).toMatch(/--read-only/);
});

test('the installed CLI runs an agent from any directory (inline worker, prebuilt workflow bundle)', () => {
  const workspace = mkdtempSync(path.join(tmp, 'cli-'));
  writeFileSync(path.join(workspace, 'a.ts'), 'export const a = 1;\n');
  const out = sh(
    path.join(app, 'node_modules', '.bin', 'durable-agent'),
    ['run', '--json', '--model', 'offline-demo', '--workspace', workspace, 'list the TypeScript files here'],
    workspace,
    { TEMPORAL_ADDRESS: testAddress(), TEMPORAL_TASK_QUEUE: uniqueQueue('cli'), DURABLE_AGENT_CODEC_KEYS: '' },
  );
  expect(JSON.parse(out)).toMatchObject({ exitReason: 'completed' });
});

test('the example type-checks against the installed types and runs end to end on Temporal', async () => {
  sh('npx', ['--no-install', 'tsc', '-p', '.'], app);
  const queue = uniqueQueue('packed');
  const workspace = mkdtempSync(path.join(tmp, 'ws-'));
  const env = {
    TEMPORAL_ADDRESS: testAddress(),
    EXAMPLE_TASK_QUEUE: queue,
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'test',
    DURABLE_AGENT_SETTINGS: path.join(tmp, 'no-settings.json'),
    DURABLE_AGENT_CODEC_KEYS: '',
  };
  fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_1', name: 'count_words', input: { text: 'one two three four' } }]),
    message('The text has 4 words.'),
    message('Hello from the durable agent.'),
  );
  // The worker's working directory is the runs' default workspace.
  worker = spawn('node', [path.join(app, 'lib', 'worker.js')], { cwd: workspace, env: { ...process.env, ...env } });
  worker.stdout?.setEncoding('utf8');
  let workerLog = '';
  worker.stdout?.on('data', (d: string) => (workerLog += d));
  worker.stderr?.on('data', (d: Buffer) => (workerLog += d.toString()));
  const out = await new Promise<string>((resolve, reject) => {
    const client = spawn('node', [path.join(app, 'lib', 'client.js')], { cwd: app, env: { ...process.env, ...env } });
    worker!.once('exit', (code) => {
      client.kill('SIGKILL');
      reject(new Error(`the worker exited (${code}) while the client ran:\n${workerLog}`));
    });
    let stdout = '';
    let stderr = '';
    client.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    client.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    client.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`client exited ${code}:\n${stderr}\nworker:\n${workerLog}`)),
    );
  });
  const [review, direct] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(review.result).toEqual({ answer: 'The text has 4 words.', exitReason: 'completed', iterations: 2 });
  expect(direct.status).toBe('completed');
  expect(direct.result.finalText).toBe('Hello from the durable agent.');
  expect(direct.events[0]).toBe('run_started');
  expect(direct.events.at(-1)).toBe('run_finished');
  // The user's tool ran in the worker and its result reached the model.
  const toolResult = JSON.stringify(fake.requests[1]?.body.messages.at(-1));
  expect(toolResult).toContain('tool_result');
  expect(toolResult).toContain('4 words');
  expect(fake.requests[0]?.body.tools.map((t: { name: string }) => t.name)).toContain('count_words');

  // The agent's activities ran on the user's queue under prefixed names.
  const connection = await Connection.connect({ address: testAddress() });
  try {
    const client = new Client({ connection });
    const history = await client.workflow.getHandle(`${review.workflowId}-agent`).fetchHistory();
    const scheduled = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes)
      .filter((a) => a !== undefined && a !== null);
    expect(scheduled.map((a) => a.activityType?.name)).toEqual([
      'durableAgent.firstModelCall',
      'durableAgent.runTool',
      'durableAgent.callModel',
    ]);
    expect(scheduled.every((a) => a.taskQueue?.name?.startsWith(queue))).toBe(true);
  } finally {
    await connection.close();
  }

  worker.kill('SIGINT');
  const code = await new Promise<number | null>((resolve) => worker!.on('exit', resolve));
  expect(code).toBe(0);
});
