/**
 * What a run carries across continue-as-new (src/workflows/run/run-state.ts): `snapshot()` writes it,
 * `RunState.restore()` reads it back, and the next execution goes on from exactly the same state.
 * Pure: no server.
 */
import fc from 'fast-check';
import {
  DEFAULT_ANTHROPIC_MODEL,
  hasKnownPrice,
  runContinuationSchema,
  type ModelResponse,
  type RunContinuation,
  type StopReason,
} from '../../src/shared';
import { RunState } from '../../src/workflows/run/run-state';

const fresh = { conversationId: 'wf/run-1', prompt: 'the task' };

const short = fc.string({ maxLength: 40 });
const count = fc.nat({ max: 10_000 });
const stopReason = fc.constantFrom<StopReason | null | undefined>(
  undefined,
  null,
  'end_turn',
  'tool_use',
  'max_tokens',
  'refusal',
);
const usage = fc.record({
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
});
const context = fc.record(
  {
    workspace: short,
    system: short,
    sources: fc.array(fc.record({ kind: fc.constantFrom('default', 'file', 'mcp_server') }), { maxLength: 3 }),
    warnings: fc.array(short, { maxLength: 3 }),
  },
  { requiredKeys: ['system', 'sources', 'warnings'] },
);

/** Every carried part of a run's state, set to arbitrary (valid) values. */
const carriedState = fc.record({
  iteration: count,
  turnIterations: count,
  usage,
  costUsd: fc.option(fc.double({ min: 0, max: 100, noNaN: true }), { nil: null }),
  lastStopReason: stopReason,
  lastAssistantText: short,
  textPrefix: short,
  continuations: count,
  compactions: count,
  lastCompactionIteration: fc.option(count, { nil: undefined }),
  needsCompaction: fc.boolean(),
  workerQueue: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
  callsPinned: fc.boolean(),
  context: fc.option(context, { nil: undefined }),
  hookEvents: fc.array(fc.constantFrom('PreToolUse', 'PostToolUse', 'Stop'), { maxLength: 3 }),
  stopBlocks: fc.nat({ max: 8 }),
  replies: fc.array(short, { maxLength: 5 }),
  pending: fc.array(
    fc.string({ minLength: 1, maxLength: 40 }).filter((m) => m.trim() !== ''),
    { maxLength: 3 },
  ),
  notices: fc.array(short, { maxLength: 5 }),
  waiting: fc.option(fc.record({ idleDeadline: fc.nat() }), { nil: undefined }),
});

type Carried = typeof carriedState extends fc.Arbitrary<infer T> ? T : never;

function stateOf(c: Carried): RunState {
  const s = RunState.restore(undefined, fresh);
  Object.assign(s, {
    iteration: c.iteration,
    turnIterations: c.turnIterations,
    usage: c.usage,
    costUsd: c.costUsd,
    lastStopReason: c.lastStopReason,
    lastAssistantText: c.lastAssistantText,
    textPrefix: c.textPrefix,
    continuations: c.continuations,
    compactions: c.compactions,
    lastCompactionIteration: c.lastCompactionIteration,
    needsCompaction: c.needsCompaction,
    workerQueue: c.workerQueue,
    callsPinned: c.callsPinned,
    context: c.context,
    hookEvents: c.hookEvents,
    stopBlocks: c.stopBlocks,
  });
  for (const text of c.replies) {
    s.conversation.append({ role: 'assistant', content: [{ type: 'text', text }] });
    s.conversation.append({ role: 'user', content: `next ${text}` });
  }
  for (const message of c.pending) s.inbox.accept({ message });
  for (const message of c.notices) s.events.emit({ kind: 'notice', message });
  return s;
}

/** The fields the next execution goes on with. */
function carried(s: RunState) {
  return {
    iteration: s.iteration,
    usage: s.usage,
    costUsd: s.costUsd,
    lastStopReason: s.lastStopReason,
    lastAssistantText: s.lastAssistantText,
    textPrefix: s.textPrefix,
    continuations: s.continuations,
    compactions: s.compactions,
    lastCompactionIteration: s.lastCompactionIteration,
    needsCompaction: s.needsCompaction,
    workerQueue: s.workerQueue,
    callsPinned: s.callsPinned,
    context: s.context,
    conversation: s.conversation.snapshot(),
    pending: s.inbox.list(),
    events: s.events.carried(),
  };
}

test('restore(snapshot(state)) goes on with every carried field of the state', () => {
  fc.assert(
    fc.property(carriedState, (c) => {
      const before = stateOf(c);
      const after = RunState.restore(before.snapshot(c.waiting), fresh);
      expect(carried(after)).toEqual(carried(before));
      expect(after.resumed).toBe(true);
      // Run start's results travel together: a run that never finished its start carries none of them.
      expect(after.hookEvents).toEqual(c.context ? c.hookEvents : []);
      expect(after.stopBlocks).toBe(c.context ? c.stopBlocks : 0);
      expect(after.turnIterations).toBe(c.context ? c.turnIterations : c.iteration);
      // A session that handed over while waiting waits on, until the same deadline.
      expect(after.waitingUntil).toBe(c.waiting?.idleDeadline);
      expect(after.status).toBe(c.waiting ? 'awaiting_input' : 'running');
    }),
  );
});

test('a snapshot is a valid continuation, and snapshotting a restored state gives the same snapshot', () => {
  fc.assert(
    fc.property(carriedState, (c) => {
      const snapshot = stateOf(c).snapshot(c.waiting);
      const parsed = runContinuationSchema().safeParse(JSON.parse(JSON.stringify(snapshot)));
      expect(parsed.error?.issues).toBeUndefined();
      expect(RunState.restore(snapshot, fresh).snapshot(c.waiting)).toEqual(snapshot);
    }),
  );
});

test('snapshot writes every field of the continuation schema except the subagents counter and the checkpoints (Run adds them)', () => {
  const c = fc.sample(carriedState, { numRuns: 1, seed: 7 })[0]!;
  const full = stateOf({
    ...c,
    lastStopReason: 'end_turn',
    textPrefix: 'cut answer',
    lastCompactionIteration: 1,
    workerQueue: 'worker-1',
    callsPinned: true,
    context: { system: 's', sources: [], warnings: [] },
    stopBlocks: 1,
    waiting: { idleDeadline: 5 },
  }).snapshot({ idleDeadline: 5 });
  const schemaKeys = Object.keys(runContinuationSchema().shape).filter((k) => k !== 'taskCount' && k !== 'checkpoints');
  expect(Object.keys(full).sort()).toEqual(schemaKeys.sort());
});

test('a fresh run starts from its prompt with nothing carried', () => {
  const s = RunState.restore(undefined, fresh);
  expect(s.resumed).toBe(false);
  expect(s.conversation.snapshot().messages).toEqual([{ role: 'user', content: 'the task' }]);
  expect(s.conversation.id).toBe('wf/run-1');
  const snapshot: RunContinuation = s.snapshot();
  expect(snapshot).toMatchObject({ iteration: 0, costUsd: 0, awaitingInput: false, pendingMessages: [] });
  expect(snapshot).not.toHaveProperty('context');
  expect(snapshot).not.toHaveProperty('turnIterations');
});

test('the carried texts are cut to their bounds', () => {
  const s = RunState.restore(undefined, fresh);
  s.lastAssistantText = 'a'.repeat(100 * 1024);
  s.textPrefix = 'b'.repeat(100 * 1024);
  const snapshot = s.snapshot();
  expect(snapshot.lastAssistantText.length).toBeLessThan(s.lastAssistantText.length);
  expect(snapshot.textPrefix!.length).toBeLessThan(s.textPrefix.length);
});

const response = (model: string, tokens: number): ModelResponse => ({
  id: 'msg-1',
  model,
  content: [],
  stopReason: 'end_turn',
  usage: { inputTokens: tokens, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
});

test('once a call has no known price the cost is unknown for good, while usage still adds up', () => {
  const priced = DEFAULT_ANTHROPIC_MODEL;
  expect(hasKnownPrice(priced)).toBe(true);
  const s = RunState.restore(undefined, fresh);
  expect(s.account(response(priced, 1000), priced, 200_000, 'ignore')).toBeGreaterThan(0);
  expect(s.costUsd).toBeGreaterThan(0);
  expect(s.account(response('no-such-model', 10), 'no-such-model', 200_000, 'ignore')).toBeNull();
  s.account(response(priced, 10), priced, 200_000, 'ignore');
  expect(s.costUsd).toBeNull();
  expect(s.usage.inputTokens).toBe(1020);
  expect(s.overBudget(0)).toBe(false);
});

test('only an iteration call judges whether the conversation needs compacting', () => {
  const s = RunState.restore(undefined, fresh);
  s.account(response('m', 9_000), 'm', 10_000, 'ignore');
  expect(s.needsCompaction).toBe(false);
  s.account(response('m', 9_000), 'm', 10_000, 'judge');
  expect(s.needsCompaction).toBe(true);
  s.account(response('m', 10), 'm', 10_000, 'judge');
  expect(s.needsCompaction).toBe(false);
});

test('outside sessions maxIterations bounds the run; in a session it bounds each message', () => {
  fc.assert(
    fc.property(
      count,
      count,
      fc.nat({ max: 100 }),
      fc.option(fc.nat({ max: 100 }), { nil: undefined }),
      (i, t, max, maxSession) => {
        const s = RunState.restore(undefined, fresh);
        s.iteration = i;
        s.turnIterations = t;
        expect(s.limitReached({ maxIterations: max, perMessage: false })).toBe(i >= max ? 'run' : undefined);
        const inSession = s.limitReached({ maxIterations: max, maxSessionIterations: maxSession, perMessage: true });
        if (maxSession !== undefined && i >= maxSession) expect(inSession).toBe('run');
        else expect(inSession).toBe(t >= max ? 'message' : undefined);
      },
    ),
  );
});

test('an answer cut at max_tokens is completed by the next one, then the held text is gone', () => {
  const s = RunState.restore(undefined, fresh);
  s.holdTruncatedText('first half, ');
  expect(s.completeText('second half ')).toBe('first half, second half');
  expect(s.textPrefix).toBe('');
  expect(s.completeText(' alone ')).toBe('alone');
});
