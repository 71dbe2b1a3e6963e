import { Writable } from 'node:stream';
import { stdoutWriter, writeJson } from '../../src/cli/transcript';
import type { HistoryRecord } from '../../src/client/transcript/history';
import { renderMarkdown } from '../../src/cli/transcript/markdown';
import { TranscriptBuilder } from '../../src/client/transcript/rebuild';
import { ROOT_HASH, chainHash, hashString, type ConversationDelta, type Message } from '../../src/shared';

/**
 * The rebuilding step alone, on records as history.ts decodes them: the cases a live run makes
 * rare (a reference that cannot be resolved, a carried message that changed, a drop without a
 * summary, an assembled system prompt).
 */

const user = (text: string): Message => ({ role: 'user', content: text });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

function headOf(messages: Message[], from = ROOT_HASH): string {
  return messages.reduce((h, m) => chainHash(h, m), from);
}

/** A `callModel` scheduled with the whole conversation. */
function fullCall(eventId: string, messages: Message[], extra: Record<string, unknown> = {}): HistoryRecord {
  const conversation: ConversationDelta = {
    id: 'c',
    baseLength: 0,
    baseHash: ROOT_HASH,
    delta: messages,
    headHash: headOf(messages),
    full: true,
  };
  return { kind: 'activity_scheduled', eventId, activityType: 'callModel', input: { conversation, ...extra } };
}

/** The model's answer to the call scheduled as `eventId`. */
function answered(eventId: string, message: Message): HistoryRecord {
  return {
    kind: 'activity_completed',
    scheduledEventId: eventId,
    activityType: 'callModel',
    result: { content: message.content },
  };
}

function build(records: HistoryRecord[]) {
  const builder = new TranscriptBuilder('wf');
  for (const r of records) builder.add(r);
  return builder.transcript;
}

test('a tool result sent by reference is found by its content hash; an unknown one waits for the full resend', () => {
  const toolUse: Message = {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 't1', name: 'glob', input: { pattern: '*' } }],
  };
  const first = [user('go')];
  const result: Message = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.ts' }] };
  const base = headOf([...first, toolUse]);
  const delta = (hash: string): HistoryRecord => ({
    kind: 'activity_scheduled',
    eventId: '9',
    activityType: 'callModel',
    input: {
      conversation: {
        id: 'c',
        baseLength: 2,
        baseHash: base,
        delta: [{ role: 'user', content: [{ type: 'tool_result_ref', tool_use_id: 't1', content_hash: hash }] }],
        headHash: headOf([result], base),
        full: false,
      },
    },
  });
  const known = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } },
    fullCall('5', first),
    answered('5', toolUse),
    { kind: 'local_activity_completed', activityType: 'runTool', result: { content: 'a.ts', isError: false } },
    delta(hashString('a.ts')),
  ]);
  expect(known.messages).toEqual([...first, toolUse, result]);

  const unknown = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } },
    fullCall('5', first),
    answered('5', toolUse),
    delta(hashString('something else')),
  ]);
  expect(unknown.messages).toEqual([...first, toolUse]);
});

test('a carried message the model never saw may change without counting as a compaction', () => {
  const carried = [user('go'), assistant('ok'), user('first draft')];
  const changed = [user('go'), assistant('ok'), user('first draft and more')];
  const t2 = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } },
    fullCall('5', [user('go')]),
    answered('5', assistant('ok')),
    { kind: 'continued_as_new', newRunId: 'r2' },
    {
      kind: 'execution_started',
      runId: 'r2',
      input: { prompt: 'go', resume: { conversation: { id: 'c', messages: carried, syncedLength: 2 } } },
    },
    fullCall('7', changed),
  ]);
  expect(t2.messages).toEqual(changed);
  expect(t2.compactions).toEqual([]);
  expect(t2.executions).toEqual([
    { runId: 'r1', firstMessageIndex: 0, status: 'continued_as_new' },
    { runId: 'r2', firstMessageIndex: 2, status: 'running' },
  ]);
});

test('older turns dropped without a summary are marked as dropped', () => {
  const long = [user('go'), assistant('one'), user('more'), assistant('two')];
  const t = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } },
    fullCall('5', long.slice(0, 3)),
    answered('5', assistant('two')),
    fullCall('8', [user('go, compacted')]),
  ]);
  expect(t.messages).toEqual([...long, user('go, compacted')]);
  expect(t.compactions).toEqual([{ atIndex: 4, replacedMessages: 4, kind: 'dropped' }]);
});

test('the assembled system prompt is shown first, whichever activity carried it', async () => {
  for (const [activityType, result] of [
    ['assembleContext', { system: 'You are an agent.', sources: [{ kind: 'instructions', path: 'AGENTS.md' }] }],
    [
      'prepareRun',
      { context: { system: 'You are an agent.', sources: [{ kind: 'instructions', path: 'AGENTS.md' }] } },
    ],
  ] as const) {
    const t = build([
      { kind: 'execution_started', runId: 'r1', input: { prompt: 'go', systemPrompt: 'extra' } },
      { kind: 'activity_scheduled', eventId: '5', activityType, input: {} },
      { kind: 'activity_completed', scheduledEventId: '5', activityType, result },
      fullCall('7', [user('go')], { system: 'You are an agent.' }),
    ]);
    expect(t).toMatchObject({ system: 'You are an agent.', systemSource: 'assembleContext' });
    let out = '';
    await renderMarkdown(t, (c) => {
      out += c;
    });
    expect(out.indexOf('## System prompt')).toBeLessThan(out.indexOf('## Conversation'));
    expect(out).toContain('Assembled at run start from: `AGENTS.md`.');
    expect(out).toContain('You are an agent.');
  }
  const plain = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go', systemPrompt: 'Be brief.' } },
    fullCall('7', [user('go')]),
  ]);
  expect(plain).toMatchObject({ system: 'Be brief.', systemSource: 'run_input' });
  const none = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } },
    fullCall('7', [user('go')]),
  ]);
  expect(none).toMatchObject({ system: null, systemSource: null });
});

test('markdown fences outgrow any backticks in the content', async () => {
  const t = build([
    { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } },
    fullCall('5', [user('go')]),
    {
      kind: 'activity_completed',
      scheduledEventId: '5',
      activityType: 'callModel',
      result: { content: [{ type: 'tool_use', id: 't', name: 'bash', input: { command: 'echo ```` done' } }] },
    },
  ]);
  let out = '';
  await renderMarkdown(t, (c) => {
    out += c;
  });
  expect(out).toContain('`````json\n{\n  "command": "echo ```` done"\n}\n`````');
});

test('JSON output waits for a slow reader instead of queueing the whole transcript', async () => {
  const messages = Array.from({ length: 200 }, (_, i) => (i % 2 ? assistant(`answer ${i}`) : user(`ask ${i}`)));
  const t = build([{ kind: 'execution_started', runId: 'r1', input: { prompt: 'ask 0' } }, fullCall('5', messages)]);
  let received = '';
  let mostQueued = 0;
  const slow = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _encoding, done) {
      received += chunk.toString();
      setImmediate(done);
    },
  });
  const write = stdoutWriter(slow);
  await writeJson(t, (chunk) => {
    mostQueued = Math.max(mostQueued, slow.writableLength);
    return write(chunk);
  });
  await new Promise((resolve) => slow.end(resolve));
  expect(JSON.parse(received)).toMatchObject({ messageCount: 200, messages });
  // At most about one message waits in the stream at a time, not the 200.
  expect(mostQueued).toBeLessThan(200);
});

test('a run started with its first model call (firstModelCall): the assembled prompt, then the answer when the worker gave one', () => {
  const context = { system: 'You are an agent.', sources: [{ kind: 'instructions', path: 'AGENTS.md' }] };
  const reply: Message = { role: 'assistant', content: [{ type: 'text', text: 'hello' }] };
  const first = (eventId: string): HistoryRecord => {
    const call = fullCall(eventId, [user('go')]);
    return { ...call, activityType: 'firstModelCall' } as HistoryRecord;
  };
  const done = (eventId: string, result: unknown): HistoryRecord => ({
    kind: 'activity_completed',
    scheduledEventId: eventId,
    activityType: 'firstModelCall',
    result,
  });
  const started: HistoryRecord = { kind: 'execution_started', runId: 'r1', input: { prompt: 'go' } };
  const answeredAtOnce = build([started, first('5'), done('5', { prepared: { context }, response: reply })]);
  expect(answeredAtOnce).toMatchObject({ system: 'You are an agent.', systemSource: 'assembleContext' });
  expect(answeredAtOnce.messages).toEqual([user('go'), reply]);
  // Hooks had to screen the prompt first: no answer in it, the next call brings it.
  const screenedFirst = build([
    started,
    first('5'),
    done('5', { prepared: { context } }),
    fullCall('7', [user('go, screened')], { system: 'You are an agent.' }),
    answered('7', reply),
  ]);
  expect(screenedFirst).toMatchObject({ system: 'You are an agent.', systemSource: 'assembleContext' });
  expect(screenedFirst.messages).toEqual([user('go, screened'), reply]);
});
