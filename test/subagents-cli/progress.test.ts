import type { AgentRunState, EventsPage, RunEvent, Usage } from '../../src/shared';
import { formatEvent, formatState } from '../../src/cli/format';
import { MAX_FOLLOW_DEPTH, MAX_FOLLOWED, SubagentProgress } from '../../src/cli/subagent-progress';

/**
 * Nested progress in run/follow, driven by recorded event pages: the printer sees the parent's
 * events in pieces, each child's events come indented between its start and its end.
 */

const usage: Usage = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const started = (seq: number, workflowId: string, extra: Partial<RunEvent> = {}): RunEvent =>
  ({
    seq,
    kind: 'subagent_started',
    toolUseId: `toolu_${seq}`,
    workflowId,
    agent: 'tester',
    description: 'run tests',
    depth: 1,
    ...extra,
  }) as RunEvent;
const finished = (seq: number, workflowId: string): RunEvent => ({
  seq,
  kind: 'subagent_finished',
  toolUseId: `toolu_x`,
  workflowId,
  exitReason: 'completed',
  usage,
  costUsd: 0.001,
});
const tool = (seq: number, command: string): RunEvent => ({
  seq,
  kind: 'tool_call_started',
  toolUseId: `t${seq}`,
  name: 'bash',
  input: { command },
});

/** Pages per workflow id, served in order; the last page repeats. */
function server(pages: Record<string, RunEvent[][]>) {
  const calls: string[] = [];
  const fetch = (id: string, after: number): Promise<EventsPage> => {
    calls.push(`${id}@${after}`);
    const list = pages[id];
    if (!list)
      return Promise.reject(
        Object.assign(new Error(`workflow not found for ID: ${id}`), { name: 'WorkflowNotFoundError' }),
      );
    const events = (list.length > 1 ? list.shift()! : list[0]!).filter((e) => e.seq > after);
    return Promise.resolve({
      events,
      cursor: events.length ? events[events.length - 1]!.seq : after,
      truncated: false,
    });
  };
  return { fetch, calls };
}

function printerLines(lines: string[]) {
  return (events: RunEvent[]) => {
    for (const e of events) {
      const line = formatEvent(e, 'p');
      if (line) lines.push(line);
    }
  };
}

test("a child's events are printed indented between its start and its end, grandchildren deeper", async () => {
  const lines: string[] = [];
  const { fetch } = server({
    'p.task-1': [
      [
        tool(1, 'npm test'),
        started(2, 'p.task-1.task-1'),
        finished(4, 'p.task-1.task-1'),
        { seq: 5, kind: 'answer', text: 'All green.\nDetails' },
      ],
    ],
    'p.task-1.task-1': [[tool(1, 'ls')]],
  });
  const progress = new SubagentProgress((l) => lines.push(l), fetch, 'p');
  await progress.page(
    [tool(1, 'task'), started(2, 'p.task-1'), finished(3, 'p.task-1'), { seq: 4, kind: 'notice', message: 'after' }],
    printerLines(lines),
  );
  expect(lines).toEqual([
    '  → bash: task',
    '  ⇢ subagent tester started: run tests (run p.task-1)',
    '  │ → bash: npm test',
    '  │ ⇢ subagent tester started: run tests (run p.task-1.task-1)',
    '      │ → bash: ls',
    '  │ ⇠ subagent p.task-1.task-1 ended completed · 10 in / 5 out tokens · $0.00100',
    '  │ “All green.”',
    '  ⇠ subagent p.task-1 ended completed · 10 in / 5 out tokens · $0.00100',
    '  ! after',
  ]);
  expect(progress.following).toEqual([]);
});

test('a running child is polled on every page with its own cursor; nothing is printed twice', async () => {
  const lines: string[] = [];
  const { fetch, calls } = server({ 'p.task-1': [[tool(1, 'a')], [tool(1, 'a'), tool(2, 'b')]] });
  const progress = new SubagentProgress((l) => lines.push(l), fetch, 'p');
  await progress.page([started(1, 'p.task-1')], printerLines(lines));
  await progress.page([], printerLines(lines));
  await progress.poll();
  expect(lines.filter((l) => l.includes('│'))).toEqual(['  │ → bash: a', '  │ → bash: b']);
  expect(calls).toEqual(['p.task-1@0', 'p.task-1@1', 'p.task-1@2']);
  expect(progress.following).toEqual(['p.task-1']);
});

test('hostile trees: a child that does not exist, a cycle back to the parent, too deep, too many at once', async () => {
  const lines: string[] = [];
  const pages: Record<string, RunEvent[][]> = { 'p.task-2': [[started(1, 'p')]] };
  let id = 'p.task-3';
  for (let d = 1; d <= MAX_FOLLOW_DEPTH; d++) {
    const next = `${id}.task-1`;
    pages[id] = [[started(1, next)]];
    id = next;
  }
  const { fetch } = server(pages);
  const progress = new SubagentProgress((l) => lines.push(l), fetch, 'p');
  await progress.page([started(1, 'p.task-1'), started(2, 'p.task-2'), started(3, 'p.task-3')], () => undefined);
  expect(lines).toContain('  │ (subagent p.task-1 not followed: workflow not found for ID: p.task-1)');
  expect(lines).toContain('      │ (not followed: run p is already shown (a cycle))');
  // One level more is read on each poll.
  for (let d = 0; d <= MAX_FOLLOW_DEPTH; d++) await progress.poll();
  expect(lines.some((l) => l.endsWith(`(not followed: deeper than ${MAX_FOLLOW_DEPTH} levels)`))).toBe(true);

  const many = new SubagentProgress((l) => lines.push(l), server({}).fetch, 'q');
  const starts = Array.from({ length: MAX_FOLLOWED + 2 }, (_, i) => started(i + 1, `q.task-${i + 1}`));
  lines.length = 0;
  await many.page(starts, () => undefined);
  expect(lines.filter((l) => l.includes(`${MAX_FOLLOWED} subagents are followed already`))).toHaveLength(2);
});

test('what a child run wrote cannot steer the terminal', async () => {
  const lines: string[] = [];
  const { fetch } = server({
    'p.task-1': [[{ seq: 1, kind: 'text', iteration: 1, text: 'hi\u001b[2J\u001b]0;pwned\u0007' }]],
  });
  const progress = new SubagentProgress((l) => lines.push(l), fetch, 'p');
  await progress.page(
    [started(1, 'p.task-1', { description: 'x\u001b[31m' } as Partial<RunEvent>)],
    printerLines(lines),
  );
  expect(lines.join('\n')).not.toContain('\u001b');
  expect(lines.join('\n')).not.toContain('\u0007');
  expect(lines).toContain('  │ “hi␛[2J␛]0;pwned␇”');
});

test('status lists the running subagents and says which descendant an approval waits in', () => {
  const state: AgentRunState = {
    status: 'awaiting_approval',
    iteration: 2,
    maxIterations: 10,
    usage,
    costUsd: 0.01,
    activeTools: ['task'],
    model: 'm',
    pendingApprovals: [
      {
        toolUseId: 'toolu_9',
        name: 'bash',
        input: { command: 'rm -rf build' },
        deadline: 0,
        subagent: { workflowId: 'p.task-1', agent: 'cleaner' },
      },
    ],
    pendingMessages: 0,
    session: false,
    subagents: [{ workflowId: 'p.task-1', toolUseId: 'toolu_1', agent: 'cleaner', description: 'clean\u001b[2J up' }],
  };
  const text = formatState('p', state);
  expect(text).toContain('subagent    p.task-1 (cleaner): clean␛[2J up · task call toolu_1');
  expect(text).toContain('approval    toolu_9: bash (in subagent cleaner, run p.task-1) would run with this input:');
  expect(formatState('p', { ...state, subagents: undefined, pendingApprovals: [] })).not.toContain('subagent');
});
