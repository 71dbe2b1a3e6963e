/**
 * A worker process SIGKILLed during an MCP call, and another one started: a read-only MCP tool is
 * simply run again (on the new worker's own connection to a new server process), a mutating one is
 * not — the model is told its outcome is unknown — and the run completes either way. The killed
 * worker's stdio server dies with it.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { AgentRunInput } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import {
  linesOf,
  requestsPerTurn,
  resultText,
  startAgentRun,
  toolResultsIn,
  waitUntil,
} from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';
import { stdioTestServer } from './support/servers';

jest.setTimeout(90_000);

const suite = useFaultSuite('mcp-kill');
const log = () => linesOf(path.join(suite.workspace, 'server.log'));

function input(prompt: string): AgentRunInput {
  return {
    prompt,
    model: 'claude-sonnet-5-5',
    workspace: suite.workspace,
    timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 },
    mcpServers: { test: stdioTestServer({ MCP_TEST_LOG: path.join(suite.workspace, 'server.log') }) },
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function killDuring(tool: string) {
  const answer = path.join(suite.workspace, 'answer.txt');
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_m1', name: `mcp__test__${tool}`, input: { path: answer } }]),
    message('Finished.'),
  );
  const first = suite.fleet.start();
  await first.ready();
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, input(`call ${tool}`));
  const started = await waitUntil(
    async () => (await log()).find((l) => l.startsWith(`${tool} started`)),
    `${tool} to start`,
  );
  const serverPid = Number(started.split(' ').pop());
  first.kill('SIGKILL');
  await first.exited;
  // The server reads EOF on its stdin when its worker dies, and exits.
  await waitUntil(() => !alive(serverPid), "the killed worker's MCP server to exit", 10_000);
  const second = suite.fleet.start();
  await second.ready();
  return { handle, answer, serverPid };
}

test('SIGKILL during a read-only MCP call: the next worker runs it again and the run completes', async () => {
  const { handle, answer, serverPid } = await killDuring('wait_read');
  await waitUntil(
    async () => (await log()).filter((l) => l.startsWith('wait_read started')).length === 2,
    'the call to run again',
    30_000,
  );
  await fs.writeFile(answer, '42');
  const result = await handle.result();
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Finished.' });
  const starts = (await log()).filter((l) => l.startsWith('wait_read started'));
  // Two server processes: the killed worker's, then the new worker's.
  expect(starts[0]).toBe(`wait_read started ${serverPid}`);
  expect(starts[1]).not.toBe(starts[0]);
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult?.is_error).toBeFalsy();
  expect(resultText(toolResult)).toBe('42');
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
});

test('SIGKILL during a mutating MCP call: it is not run again; the model is told the outcome is unknown', async () => {
  const { handle } = await killDuring('wait_write');
  const result = await handle.result();
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Finished.' });
  const [toolResult] = toolResultsIn(suite.fake.requests[1]);
  expect(toolResult).toMatchObject({ tool_use_id: 'toolu_m1', is_error: true });
  expect(resultText(toolResult)).toMatch(/outcome of this mcp__test__wait_write call is unknown/);
  expect(resultText(toolResult)).toMatch(/NOT run again/);
  expect((await log()).filter((l) => l.startsWith('wait_write started'))).toHaveLength(1);
  expect(requestsPerTurn(suite.fake.requests)).toEqual([1, 1]);
});
