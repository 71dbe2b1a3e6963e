/**
 * A worker killed with SIGKILL while a subagent's model call streams: another worker takes over
 * and the whole tree completes. No completed model call is made again (the fake Messages API
 * records every request) and the child's mutating command ran once (its side-effect log).
 */
import * as path from 'node:path';
import type { AgentRunInput } from '../../src/shared';
import { message } from '../support/fake-anthropic';
import { linesOf, startAgentRun, toolResultsIn, waitUntil } from '../support/fault-helpers';
import { useFaultSuite } from '../support/fault-suite';

jest.setTimeout(90_000);

const suite = useFaultSuite('subagent-kill');

/** Which run a request belongs to, by its first message (the run's prompt), and how far along that run is. */
const who = (request: { body: { messages?: { content: unknown }[] } }) => {
  const messages = request.body.messages ?? [];
  const first = messages[0]?.content;
  const prompt = typeof first === 'string' ? first : JSON.stringify(first);
  return `${prompt.startsWith('child') ? 'child' : 'parent'}:${messages.length}`;
};

test('SIGKILL during a subagent model call: the tree completes; no completed call or mutating command is repeated', async () => {
  suite.fake.enqueue(
    message([{ type: 'tool_use', id: 'toolu_p1', name: 'task', input: { prompt: 'child: append to the log' } }]),
    message([{ type: 'tool_use', id: 'toolu_c1', name: 'bash', input: { command: 'echo ran >> effects.log' } }]),
    // The child's second call streams for ~6 s, so the kill lands in the middle of it.
    message('Appended.', { pings: 30, eventDelayMs: 200 }),
    message('Appended.'),
    message('The subagent appended the line.'),
  );
  const first = suite.fleet.start();
  await first.ready();
  const input: AgentRunInput = {
    prompt: 'delegate the append',
    model: 'claude-sonnet-5-5',
    workspace: suite.workspace,
    tools: ['bash', 'task'],
    timeouts: { modelHeartbeatSeconds: 2, toolHeartbeatSeconds: 2 },
  };
  const handle = await startAgentRun(suite.env.client, suite.taskQueue, input);
  await waitUntil(() => suite.fake.requests.length >= 3, "the child's second model call");
  first.kill('SIGKILL');
  await first.exited;
  const second = suite.fleet.start();
  await second.ready();
  const result = await handle.result();

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The subagent appended the line.' });
  // Each call once, except the child's second, cut off by the kill and then retried.
  expect(suite.fake.requests.map(who)).toEqual(['parent:1', 'child:1', 'child:3', 'child:3', 'parent:3']);
  expect(await linesOf(path.join(suite.workspace, 'effects.log'))).toEqual(['ran']);
  expect(toolResultsIn(suite.fake.requests[4])[0]).toMatchObject({ tool_use_id: 'toolu_p1', content: 'Appended.' });
});
