/**
 * Every cut the project makes to bound text falls on a code point boundary: given well-formed text
 * (emoji, astral characters), the cut text is well-formed too, never half a surrogate pair.
 * And the request sanitiser replaces what is already broken, and nothing else.
 */
import fc from 'fast-check';
import { cutBytes, cutChars } from '../../src/shared/bounds';
import { cutPrefix, cutSuffix, isWellFormed, wellFormed, wellFormedJson } from '../../src/shared/well-formed';
import { OutputCollector } from '../../src/tools/output-collector';
import { truncateLine, truncateTail } from '../../src/tools/text';

/** Text rich in surrogate pairs: ASCII, BMP and astral characters mixed. */
const text = fc
  .array(fc.constantFrom('a', 'é', '中', '😀', '𝄞', '\n', '🏳️‍🌈'), { maxLength: 60 })
  .map((parts) => parts.join(''));
const bound = fc.integer({ min: 0, max: 130 });
const wf = (s: string) => expect(isWellFormed(s)).toBe(true);

test('cutPrefix and cutSuffix never split a pair and keep at most what was asked', () => {
  fc.assert(
    fc.property(text, bound, (t, n) => {
      const p = cutPrefix(t, n);
      const s = cutSuffix(t, n);
      wf(p);
      wf(s);
      expect(p.length).toBeLessThanOrEqual(Math.max(0, n));
      expect(p.length).toBeGreaterThanOrEqual(Math.min(t.length, n) - 1);
      expect(t.startsWith(p)).toBe(true);
      expect(t.endsWith(s)).toBe(true);
      expect(s.length).toBeLessThanOrEqual(Math.max(0, n));
    }),
  );
});

test('the tools’ cuts (truncateLine, truncateTail) give well-formed text', () => {
  fc.assert(
    fc.property(text, bound, (t, n) => {
      wf(truncateLine(t, n));
      wf(truncateLine(t.slice(0, n), n, t.length));
      wf(truncateTail(t, n + 60));
      expect(truncateTail(t, n + 60).length).toBeLessThanOrEqual(n + 60);
    }),
  );
});

test('a line kept only in part by a streamed read is cut on a whole emoji', () => {
  // read_file keeps the first READ_FILE_MAX_LINE_CHARS units of a line, which may end in half a pair.
  const line = `a${'😀'.repeat(10)}`;
  const kept = line.slice(0, 10);
  expect(isWellFormed(kept)).toBe(false);
  expect(truncateLine(kept, 10, line.length)).toMatch(/^a(😀){4}… \[line truncated: 12 more characters\]$/);
});

test('the bash output collector keeps a well-formed head and tail, in order, whatever the chunks', () => {
  fc.assert(
    fc.property(fc.array(text, { maxLength: 12 }), bound, bound, (chunks, head, tail) => {
      const out = new OutputCollector(head, tail);
      for (const chunk of chunks) out.push(chunk);
      const shown = out.toString();
      wf(shown);
      const whole = chunks.join('');
      if (!shown.includes('[… output truncated')) expect(shown).toBe(whole);
      else {
        const [first, last] = shown.split(/\n\n\[… output truncated: \d+ of \d+ characters omitted\. …\]\n\n/);
        expect(whole.startsWith(first!)).toBe(true);
        expect(whole.endsWith(last!)).toBe(true);
        expect(shown).toContain(`omitted. …]`);
        const omitted = Number(/truncated: (\d+) of/.exec(shown)![1]);
        expect(first!.length + last!.length + omitted).toBe(whole.length);
      }
    }),
  );
});

test('the shared cuts (cutChars, cutBytes) give well-formed text', () => {
  fc.assert(
    fc.property(text, bound, (t, n) => {
      wf(cutChars(t, n));
      wf(cutBytes(t, n));
      wf(cutBytes(t, n, ''));
    }),
  );
});

test('wellFormed replaces each lone surrogate by U+FFFD and keeps pairs', () => {
  expect(wellFormed('a\ud83d')).toBe('a\ufffd');
  expect(wellFormed('\ude00b')).toBe('\ufffdb');
  expect(wellFormed('\ude00\ud83d')).toBe('\ufffd\ufffd');
  expect(wellFormed('😀')).toBe('😀');
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      const fixed = wellFormed(s);
      wf(fixed);
      expect(fixed.length).toBe(s.length);
      if (isWellFormed(s)) expect(fixed).toBe(s);
    }),
  );
});

test('wellFormedJson fixes strings and keys at any depth and leaves untouched parts as they are', () => {
  const thinking = { type: 'thinking', thinking: 'ok 😀', signature: 'sig' };
  const request = {
    system: 'sys \ud800',
    messages: [
      { role: 'assistant', content: [thinking] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x\udc00' }] },
    ],
    tools: [{ name: 'a', input_schema: { properties: { ['k\ud800']: { type: 'string' } } } }],
  };
  const fixed = wellFormedJson(request);
  expect(fixed.system).toBe('sys \ufffd');
  expect(fixed.messages[0]).toBe(request.messages[0]);
  expect(fixed.messages[0]!.content[0]).toBe(thinking);
  expect(JSON.stringify(fixed)).toContain('"content":"x\ufffd"');
  expect(Object.keys(fixed.tools[0]!.input_schema.properties)).toEqual(['k\ufffd']);
  expect(request.system).toBe('sys \ud800');
  const clean = { a: ['b', { c: 'd' }] };
  expect(wellFormedJson(clean)).toBe(clean);
  const proto = JSON.parse('{"__proto__": "x\\ud800"}') as Record<string, unknown>;
  const fixedProto = wellFormedJson(proto);
  expect(Object.getPrototypeOf(fixedProto)).toBe(Object.prototype);
  expect(Object.getOwnPropertyDescriptor(fixedProto, '__proto__')?.value).toBe('x\ufffd');
});
