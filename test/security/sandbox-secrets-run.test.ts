/**
 * A whole run (real worker process, real server, fake Messages API) whose bash tries every way we
 * know to read the provider key: the key is in no tool result, no request body the API receives,
 * and nowhere in the run's history.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { message } from '../support/fake-anthropic';
import { resultText, startAgentRun, toolResultsIn } from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';
import { tempWorkspace } from '../support/temporal';

jest.setTimeout(60_000);

const KEY = `sk-ant-run-secret-${randomUUID()}`;
let home = '';
const suite = useFaultSuite('secrets', {
  ANTHROPIC_API_KEY: KEY,
  get HOME() {
    return home;
  },
} as unknown as Record<string, string>);

beforeAll(async () => {
  home = await tempWorkspace('secret-home');
  mkdirSync(path.join(home, '.config'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'credentials'), `ANTHROPIC_API_KEY=${KEY}\n`);
});

test('env, /proc/$PPID/environ, /proc/1/environ and the worker’s files do not give the key to the model', async () => {
  const probes = [
    'env',
    'cat /proc/$PPID/environ | tr "\\0" "\\n"',
    'cat /proc/1/environ | tr "\\0" "\\n"',
    'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done',
    `cat ${JSON.stringify(path.join(home, '.config', 'credentials'))}`,
    `grep -r sk-ant ${JSON.stringify(home)} ${JSON.stringify(process.cwd())} /root /home /etc 2>/dev/null | head`,
  ];
  suite.fake.enqueue(
    message(probes.map((command, i) => ({ type: 'tool_use', id: `toolu_s${i}`, name: 'bash', input: { command } }))),
    message('Nothing found.'),
  );
  const worker = suite.fleet.start({}, 'secrets');
  await worker.ready();
  const handle = await startAgentRun(
    suite.env.client,
    suite.taskQueue,
    { prompt: 'look for keys', model: 'claude-sonnet-5-5', workspace: suite.workspace },
    'secrets',
  );
  const result = await handle.result();
  expect(result.exitReason).toBe('completed');

  const results = toolResultsIn(suite.fake.requests[1]);
  expect(results).toHaveLength(probes.length);
  expect(resultText(results[0])).toMatch(/^PATH=\/usr\/local\/sbin:/m); // the probes ran
  for (const r of results) expect(resultText(r)).not.toContain(KEY);
  // The worker had the key (the API got it as the credential header), never in a body.
  for (const request of suite.fake.requests) expect(JSON.stringify(request.body)).not.toContain(KEY);
  expect(JSON.stringify(suite.fake.requests[0]?.headers)).toContain(KEY);
  const history = JSON.stringify((await handle.fetchHistory()).events);
  expect(history).not.toContain(KEY);
  expect(history).not.toContain(Buffer.from(KEY).toString('base64'));
});
