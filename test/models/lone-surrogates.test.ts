/**
 * A lone UTF-16 surrogate in anything that goes to the provider (a tool's output, a line read_file
 * cut in the middle of an emoji, the system prompt, the prompt) is replaced by U+FFFD before the
 * request leaves: the fake Messages API refuses a body that holds one (400), as the real API does,
 * and the run must complete, not fail.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { AnthropicProvider } from '../../src/models/anthropic';
import { createBuiltinTools, defineTool, ToolRegistry } from '../../src/tools';
import { READ_FILE_MAX_LINE_CHARS } from '../../src/tools/read-file';
import { message, startFakeAnthropic } from '../support/fake-anthropic';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('lone-surrogates', startFakeAnthropic);

const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const brokenEcho = defineTool({
  name: 'broken_echo',
  description: 'Answers with text that ends in half an emoji.',
  inputSchema: z.object({}),
  sideEffect: 'read_only',
  execute: async () => 'before \ud83d after \ude00 end',
});

test('the fake API refuses a lone surrogate, as the real API does', async () => {
  suite.fake.enqueue(message('never sent'));
  const response = await fetch(`${suite.fake.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'claude-sonnet-5-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'a\ud800' }],
    }),
  });
  expect(response.status).toBe(400);
  expect(suite.fake.pending()).toBe(1);
});

test('a run whose tool output, cut line, system prompt and prompt hold lone surrogates completes', async () => {
  const fake = suite.fake;
  // One line of emoji, longer than read_file keeps: its cut falls between the two halves of a pair.
  await fs.writeFile(path.join(suite.workspace, 'emoji.txt'), `a${'😀'.repeat(READ_FILE_MAX_LINE_CHARS)}\n`);
  fake.enqueue(
    message([
      { type: 'tool_use', id: 'toolu_1', name: 'broken_echo', input: {} },
      { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: 'emoji.txt' } },
    ]),
    message('done'),
  );
  const provider = new AnthropicProvider({ baseURL: fake.url, apiKey: 'sk-test' });
  const tools = new ToolRegistry([...createBuiltinTools(), brokenEcho]);
  const result = await withWorker(suite.env, { model: provider, deps: { tools } }, async (tq) =>
    runResult(await start(tq, { model: 'claude-sonnet-5-5', prompt: 'look \udc00', systemPrompt: 'be brief \ud800' })),
  );
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'done' });
  expect(fake.requests).toHaveLength(2);
  const second = JSON.stringify(fake.requests[1]!.body);
  expect(LONE.test(JSON.stringify(fake.requests[0]!.body.system))).toBe(false);
  expect(second).toContain('before \ufffd after \ufffd end');
  expect(second).toContain('look \ufffd');
  expect(second).toContain('line truncated');
  // The cut line ends on a whole emoji, not on a replacement character.
  expect(second).toMatch(/😀… \[line truncated/);
});
