/**
 * Under the text protocol the model's words and its call are told apart: `replyProse` reads a whole
 * reply, `ProseStream` a reply as it streams, in any chunking; what the stream passes on never
 * contradicts what the events later say (it is the events' text, give or take white space).
 */
import fc from 'fast-check';
import { parseToolReply, replyProse } from '../../src/shared/text-protocol';
import { ProseStream } from '../../src/shared/text-protocol-stream';
import { proseProgress } from '../../src/activities/prose-progress';

const call = (name: string, params: unknown) =>
  `<tool_code>\n<name>${name}</name>\n<parameters>${JSON.stringify(params)}</parameters>\n</tool_code>`;

/** The stream's output for `text` cut into pieces at `cuts`. */
function streamed(text: string, cuts: number[]): string {
  let out = '';
  const stream = new ProseStream((d) => (out += d));
  let from = 0;
  for (const at of [...new Set(cuts.map((c) => Math.min(c, text.length)))].sort((a, b) => a - b)) {
    stream.push(text.slice(from, at));
    from = at;
  }
  stream.push(text.slice(from));
  return out;
}

const REPLIES: Array<[string, string]> = [
  [`Let me read the notes first.\n${call('read_file', { path: 'notes.txt' })}`, 'Let me read the notes first.'],
  [`I'll list files.\n\`\`\`xml\n${call('bash', { command: 'ls' })}\n\`\`\``, "I'll list files."],
  [`${call('bash', { command: 'echo "<tool_code>"' })}\n<observation>made up</observation>`, ''],
  [
    `Thinking < 3 things <tool_codes are not tags.\n<tool_code >\n<name>bash</name></tool_code>`,
    'Thinking < 3 things <tool_codes are not tags.',
  ],
  ['<final_answer>\nThe file says hello.\n</final_answer>', 'The file says hello.'],
  ['Plain answer with `code` and\n```sh\nls\n```\ndone.', 'Plain answer with `code` and\n```sh\nls\n```\ndone.'],
];

describe('replyProse', () => {
  test.each(REPLIES)('shows the words, not the call: %#', (reply, prose) => {
    expect(replyProse(reply)).toBe(prose);
  });

  test('a call keeps running as parsed: the prose is only what is shown', () => {
    const reply = REPLIES[0]![0];
    expect(parseToolReply(reply, ['read_file'])).toMatchObject({ kind: 'call', name: 'read_file' });
    expect(replyProse(reply)).not.toContain('<');
  });
});

describe('ProseStream', () => {
  test.each(REPLIES.slice(0, 5))('one character at a time passes exactly the prose: %#', (reply, prose) => {
    const cuts = Array.from({ length: reply.length }, (_, i) => i);
    expect(streamed(reply, cuts).trim()).toBe(prose);
  });

  test('whatever the chunking, the stream is the prose (or a prefix of it) and never shows the block', () => {
    const thought = fc.string({ maxLength: 40 }).filter((s) => !s.includes('<') && !s.includes('`'));
    fc.assert(
      fc.property(
        thought,
        fc.boolean(),
        fc.string({ maxLength: 30 }),
        fc.array(fc.nat(200), { maxLength: 12 }),
        (words, fenced, arg, cuts) => {
          const block = call('bash', { command: arg });
          const reply = fenced ? `${words}\n\`\`\`xml\n${block}\n\`\`\`` : `${words}${block}after`;
          const out = streamed(reply, cuts);
          expect(out.trim()).toBe(replyProse(reply));
          expect(out).not.toContain('<tool_code');
          expect(out).not.toContain('```');
        },
      ),
    );
  });

  test('a final answer streams its content and nothing after its closing tag', () => {
    const reply = '<final_answer>All good.</final_answer>\n<observation>x</observation>';
    for (let size = 1; size <= 8; size++) {
      const cuts = Array.from({ length: Math.ceil(reply.length / size) }, (_, i) => i * size);
      expect(streamed(reply, cuts)).toBe('All good.');
    }
  });

  test('prose that only looks like a tag start is passed on once it is clearly not one', () => {
    let out = '';
    const stream = new ProseStream((d) => (out += d));
    stream.push('a <tool_co');
    expect(out).toBe('a ');
    stream.push('ol> and ``');
    expect(out).toBe('a <tool_cool> and ``');
    stream.push('` fences');
    expect(out).toBe('a <tool_cool> and ``` fences');
  });
});

describe('proseProgress', () => {
  test('under the text protocol text deltas lose the block; thinking and native calls pass unchanged', () => {
    const seen: string[] = [];
    const ctx = { progress: (e: { kind: string; delta: string }) => seen.push(`${e.kind}:${e.delta}`) };
    const xml = proseProgress('xml', ctx);
    xml.progress!({ kind: 'thinking', delta: '<tool_code>' });
    xml.progress!({ kind: 'text', delta: 'Look.\n<tool_code><name>bash' });
    expect(seen).toEqual(['thinking:<tool_code>', 'text:Look.\n']);
    expect(proseProgress('native', ctx)).toBe(ctx);
    expect(proseProgress(undefined, ctx)).toBe(ctx);
  });
});
