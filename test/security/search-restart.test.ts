/**
 * Issue 11, item 3: "after kill -9 a restarted worker replays the call and freezes again". A real
 * worker process is SIGKILLed in the middle of a heavy grep (a local activity: nothing of it is in
 * history yet), and a new worker process on the same queue takes the run over. It runs the grep
 * again, the search deadline (30 s by default) stops it with an is_error result, and the run
 * completes; meanwhile the new worker serves another run at once, so it is not frozen.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { SEARCH_DEADLINE_MS } from '../../src/tools/search/limits';
import { message } from '../support/fake-anthropic';
import { resultText, startAgentRun, toolResultsIn, waitUntil } from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';

jest.setTimeout(180_000);

/** RE2 accepts it but runs it as an NFA on varied text: about 2-3 MB/s, so 160 MiB takes about a minute. */
const HEAVY = '[a-p].{20}[a-p].{20}[a-p].{20}Z';

const suite = useFaultSuite('search-restart');

async function writeSlowFile(file: string): Promise<void> {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz     ';
  const block = randomBytes(4 * 1024 * 1024);
  for (let i = 0; i < block.length; i++) {
    block[i] = i % 200 === 199 ? 0x0a : alphabet.charCodeAt((block[i] as number) % alphabet.length);
  }
  const handle = await fs.open(file, 'w');
  try {
    for (let i = 0; i < 40; i++) await handle.write(block);
  } finally {
    await handle.close();
  }
}

test('a worker killed mid-grep is replaced by one that replays the run without freezing', async () => {
  await writeSlowFile(path.join(suite.workspace, 'slow.txt'));
  const input = { pattern: HEAVY, path: 'slow.txt', output_mode: 'count' };
  suite.fake.enqueue(message([{ type: 'tool_use', id: 'toolu_heavy', name: 'grep', input }]));

  const first = suite.fleet.start({}, 'first');
  await first.ready();
  const heavy = await startAgentRun(
    suite.env.client,
    suite.taskQueue,
    { prompt: 'search', model: 'claude-sonnet-5-5', workspace: suite.workspace, tools: ['grep'] },
    'search-heavy',
  );
  await waitUntil(() => suite.fake.requests.length >= 1, 'the first model call');
  // The grep is running in the first worker's search thread; kill the process under it.
  await new Promise((r) => setTimeout(r, 3_000));
  first.kill('SIGKILL');
  await first.exited;

  const second = suite.fleet.start({}, 'second');
  await second.ready();
  const replayStarted = Date.now();
  // While the second worker runs the replayed grep, it serves another run at once.
  suite.fake.enqueue(message('quick answer'));
  const quick = await startAgentRun(
    suite.env.client,
    suite.taskQueue,
    { prompt: 'quick', model: 'claude-sonnet-5-5', workspace: suite.workspace, tools: ['grep'] },
    'search-quick',
  );
  expect(await quick.result()).toMatchObject({ exitReason: 'completed', finalText: 'quick answer' });
  expect(Date.now() - replayStarted).toBeLessThan(SEARCH_DEADLINE_MS);

  suite.fake.enqueue(message('the search was stopped'));
  expect(await heavy.result()).toMatchObject({ exitReason: 'completed', finalText: 'the search was stopped' });
  const [toolResult] = toolResultsIn(suite.fake.requests[suite.fake.requests.length - 1]);
  expect(toolResult?.is_error).toBe(true);
  expect(resultText(toolResult)).toBe(
    'Error: grep was stopped after 30 seconds, its time limit, before it finished. Search a smaller part of the ' +
      'workspace (path, glob) or use a more specific pattern.',
  );
});
