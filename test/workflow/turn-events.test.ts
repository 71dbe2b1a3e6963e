/**
 * The `events` log of a turn, in turn order: the model's reasoning, its text, then per tool
 * call its start and result; the final answer once, as `answer`. End to end: the real workflow and
 * worker, the real Anthropic SDK against the fake Messages API streaming thinking blocks.
 */
import { rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AnthropicProvider } from '../../src/models/anthropic';
import { MAX_EVENTS_PAGE_BYTES, eventsQuery, type RunEvent } from '../../src/shared';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

jest.setTimeout(60_000);
const { suite, start } = useWorkflowSuite('turn-events');

let fake: FakeAnthropic;
let settingsFile = '';
beforeEach(async () => {
  fake = await startFakeAnthropic();
  settingsFile = path.join(os.tmpdir(), `durable-agent-turn-events-${Date.now()}-${Math.random()}.json`);
});
afterEach(async () => {
  await fake?.close();
  rmSync(settingsFile, { force: true });
});

const thinking = (t: string) => ({ type: 'thinking', thinking: t, signature: `sig-${t.length}` });
const write = (id: string, file: string) => ({
  type: 'tool_use',
  id,
  name: 'write_file',
  input: { path: file, content: file },
});

/** Runs the queued answers to the end and returns every event, read page by page with the cursor. */
async function runAndPage(): Promise<{ events: RunEvent[]; pages: number[] }> {
  const model = new AnthropicProvider({ baseURL: fake.url, apiKey: 'sk-test' });
  return withWorker(suite.env, { model, deps: { settingsFile } }, async (tq) => {
    const handle = await start(tq, { model: 'claude-sonnet-5-5' });
    await runResult(handle);
    const events: RunEvent[] = [];
    const pages: number[] = [];
    let after = 0;
    for (;;) {
      const page = await handle.query(eventsQuery, { after });
      pages.push(Buffer.byteLength(JSON.stringify(page)));
      expect(page.truncated).toBe(false);
      if (page.events.length === 0) break;
      events.push(...page.events);
      after = page.cursor;
    }
    return { events, pages };
  });
}

const narrative = (events: RunEvent[]) =>
  events
    .filter((e) => ['reasoning', 'text', 'tool_call_started', 'tool_call_finished', 'answer'].includes(e.kind))
    .map((e) => {
      if (e.kind === 'reasoning' || e.kind === 'text' || e.kind === 'answer') return `${e.kind}:${e.text}`;
      return `${e.kind}:${(e as { toolUseId: string }).toolUseId}`;
    });

test('reasoning, text, then each tool call started/finished; the answer once, and not also as text', async () => {
  fake.enqueue(
    message([thinking('Plan: write two files.'), { type: 'text', text: 'Writing them now.' }, write('w1', 'a.txt')]),
    message([thinking('One more.'), write('w2', 'b.txt')]),
    message([thinking('All written.'), { type: 'text', text: 'Both files are written.' }]),
  );
  const { events, pages } = await runAndPage();
  expect(narrative(events)).toEqual([
    'reasoning:Plan: write two files.',
    'text:Writing them now.',
    'tool_call_started:w1',
    'tool_call_finished:w1',
    'reasoning:One more.',
    'tool_call_started:w2',
    'tool_call_finished:w2',
    'reasoning:All written.',
    'answer:Both files are written.',
  ]);
  // Sequence numbers are whole and increasing across pages; each page fits its bound.
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  for (const size of pages) expect(size).toBeLessThan(MAX_EVENTS_PAGE_BYTES);
  expect(events.at(-1)).toMatchObject({ kind: 'run_finished', exitReason: 'completed' });
});

test('parallel tool calls: every start comes after the turn text and before its own result', async () => {
  fake.enqueue(
    message([
      { type: 'text', text: 'Three at once.' },
      write('p1', 'x.txt'),
      write('p2', 'y.txt'),
      write('p3', 'z.txt'),
    ]),
    message('Done.'),
  );
  const { events } = await runAndPage();
  const order = narrative(events);
  const at = (s: string) => order.indexOf(s);
  for (const id of ['p1', 'p2', 'p3']) {
    expect(at(`tool_call_started:${id}`)).toBeGreaterThan(at('text:Three at once.'));
    expect(at(`tool_call_finished:${id}`)).toBeGreaterThan(at(`tool_call_started:${id}`));
    expect(at(`tool_call_finished:${id}`)).toBeLessThan(at('answer:Done.'));
  }
  expect(order.filter((s) => s.includes('Done.'))).toEqual(['answer:Done.']);
});

test('long thinking is cut in its event (flagged truncated); pages stay bounded', async () => {
  const long = 'deep thought. '.repeat(5_000);
  fake.enqueue(message([thinking(long), { type: 'text', text: 'Short answer.' }]));
  const { events, pages } = await runAndPage();
  const reasoning = events.find((e) => e.kind === 'reasoning') as Extract<RunEvent, { kind: 'reasoning' }>;
  expect(reasoning.truncated).toBe(true);
  expect(reasoning.text.length).toBeLessThan(long.length);
  expect(long.startsWith(reasoning.text.slice(0, 100))).toBe(true);
  for (const size of pages) expect(size).toBeLessThan(MAX_EVENTS_PAGE_BYTES);
  expect(narrative(events).filter((s) => s.startsWith('answer:'))).toEqual(['answer:Short answer.']);
});

test('an answer a Stop hook sends back is still shown: its text is an event before the next turn', async () => {
  writeFileSync(
    settingsFile,
    JSON.stringify({
      hooks: {
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command:
                  'if grep -q \'"stop_hook_active":true\'; then exit 0; fi; echo \'{"decision":"block","reason":"run the tests"}\'',
              },
            ],
          },
        ],
      },
    }),
  );
  fake.enqueue(message('First attempt at an answer.'), message('Tests pass.'));
  const { events } = await runAndPage();
  const told = narrative(events);
  // The operator must see what the model said before the hook kept it going (as text or answer).
  expect(told.some((s) => s.endsWith(':First attempt at an answer.'))).toBe(true);
  expect(told.filter((s) => s.startsWith('answer:'))).toEqual(['answer:Tests pass.']);
});

test('an answer cut at max_tokens and continued is shown once: not its first part as text and again in the answer', async () => {
  fake.enqueue(
    message('The first half of the answer, ', { stop_reason: 'max_tokens' }),
    message('and the second half.'),
  );
  const { events } = await runAndPage();
  const told = narrative(events);
  expect(told.filter((s) => s.startsWith('answer:'))).toEqual([
    'answer:The first half of the answer, and the second half.',
  ]);
  expect(told.filter((s) => s.includes('The first half'))).toHaveLength(1);
});
