/**
 * The debug switch: with DURABLE_AGENT_DEBUG=1 the worker writes one line per model call and per
 * tool call to stderr (sizes, timings, the model's decision), and nothing of the conversation's text;
 * without it, none.
 */
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { DEBUG_PREFIX } from '../../src/telemetry/debug-log';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('debug-log');

/** Runs a two-turn run (one write_file call) and returns the debug lines written to stderr. */
async function debugLinesOfRun(debug: string | undefined): Promise<string[]> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest) => {
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (s.startsWith(DEBUG_PREFIX)) lines.push(s);
    return write(chunk, ...(rest as []));
  });
  const before = process.env.DURABLE_AGENT_DEBUG;
  if (debug === undefined) delete process.env.DURABLE_AGENT_DEBUG;
  else process.env.DURABLE_AGENT_DEBUG = debug;
  try {
    const model = new ScriptedModel([
      toolUse([{ id: 'toolu_w', name: 'write_file', input: { path: 'secret.txt', content: 'the secret plan' } }]),
      text('All written: the secret plan.'),
    ]);
    const result = await withWorker(suite.env, { model }, async (tq) => runResult(await start(tq, { prompt: 'hush' })));
    expect(result.exitReason).toBe('completed');
  } finally {
    if (before === undefined) delete process.env.DURABLE_AGENT_DEBUG;
    else process.env.DURABLE_AGENT_DEBUG = before;
    spy.mockRestore();
  }
  return lines;
}

test('DURABLE_AGENT_DEBUG=1 logs a line per model call and per tool call, with sizes, timings and decisions', async () => {
  const lines = await debugLinesOfRun('1');
  const models = lines.filter((l) => l.includes(' model call '));
  const tools = lines.filter((l) => l.includes(' tool call '));
  expect(models).toHaveLength(2);
  expect(tools).toHaveLength(1);
  expect(models[0]).toMatch(
    /model call run=debug-log-\S+ attempt=1 model=scripted-test request: 1 messages, \d+ bytes, \d+ tools(, tool_choice \w+)? \| response: tool_use, 1 blocks, \d+ bytes, \d+ in \(0 cached\) \/ \d+ out tokens → calls 1 tool: write_file \| \d+ ms\n$/,
  );
  expect(models[1]).toMatch(/request: 3 messages, .* response: end_turn, .* → answers \| \d+ ms\n$/);
  expect(tools[0]).toMatch(
    /tool call run=debug-log-\S+ attempt=1 write_file id=toolu_w input \d+ bytes \| ok, \d+ chars \| \d+ ms\n$/,
  );
  // Sizes and names only: the conversation's text stays out of the log.
  expect(lines.join('')).not.toMatch(/secret plan|hush/);
});

test('without the switch, no debug line', async () => {
  expect(await debugLinesOfRun(undefined)).toEqual([]);
});
