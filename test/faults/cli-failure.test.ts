/**
 * What the operator sees when the provider refuses for good: the real CLI (built bin, inline
 * worker, real SDK) against the fake Messages API answering 401.
 */
import type { AgentRunResult } from '../../src/shared';
import { ErrorTypes } from '../../src/shared';
import { apiError, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { runCli } from '../support/cli-process';
import { tempWorkspace, testAddress, uniqueQueue } from '../support/temporal';

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake?.close();
});

test('a permanent provider error: the CLI exits 1 with the cause on stderr and the failed result as JSON, after one request', async () => {
  fake.enqueue(apiError(401, 'authentication_error', 'invalid x-api-key'));
  const workspace = await tempWorkspace('cli-fail');
  const cli = runCli(
    ['run', '--json', '--model', 'claude-sonnet-5-5', '--workspace', workspace, 'say hello'],
    {
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_TASK_QUEUE: uniqueQueue('cli-fail'),
      ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: 'sk-test',
    },
    workspace,
  );
  const { code, stdout, stderr } = await cli.done;

  expect(code).toBe(1);
  const result = JSON.parse(stdout) as AgentRunResult;
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe(ErrorTypes.Authentication);
  expect(result.error?.message).toContain('invalid x-api-key');
  const lastLine = stderr.trim().split('\n').pop();
  expect(lastLine).toBe(`run ended 'failed': ${result.error?.message}`);
  expect(lastLine).toMatch(/Anthropic API 401 authentication_error: invalid x-api-key/);
  expect(fake.requests).toHaveLength(1);
});
