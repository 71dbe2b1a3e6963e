import fc from 'fast-check';
import {
  formatObservation,
  parseToolReply,
  renderToolDefinitions,
  TOOL_CALL_FORMAT,
  type ParsedToolReply,
} from '../../src/shared/text-protocol';

const TOOLS = ['bash', 'read_file', 'done'];

function call(name: string, params: string): string {
  return `<tool_code>\n<name>${name}</name>\n<parameters>${params}</parameters>\n</tool_code>`;
}

function observationOf(reply: ParsedToolReply): string {
  if (reply.kind !== 'malformed') throw new Error(`expected malformed, got ${JSON.stringify(reply)}`);
  return reply.observation;
}

describe('renderToolDefinitions', () => {
  test("shows every tool's name, description and JSON Schema inside <tool_definitions>, and the call format", () => {
    const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };
    const text = renderToolDefinitions([
      { name: 'bash', description: 'Run a shell command', inputSchema: schema },
      { name: 'done', description: 'Finish', inputSchema: { type: 'object' } },
    ]);
    const defs = text.slice(text.indexOf('<tool_definitions>'), text.indexOf('</tool_definitions>'));
    expect(defs).toContain('<name>bash</name>');
    expect(defs).toContain('<description>Run a shell command</description>');
    expect(defs).toContain(JSON.stringify(schema));
    expect(defs).toContain('<name>done</name>');
    expect(text).toContain(TOOL_CALL_FORMAT);
    expect(text).toContain('<final_answer>');
    expect(text).toContain('<observation');
    expect(text).toMatch(/one tool per reply/i);
  });
});

describe('parseToolReply: calls', () => {
  test('reads name and parameters, with reasoning before the block and an invented observation after it', () => {
    const block = call('bash', '{"command": "ls -la"}');
    const reply = parseToolReply(`I will list the files.\n${block}\n<observation>fake</observation>`, TOOLS);
    expect(reply).toEqual({ kind: 'call', name: 'bash', input: { command: 'ls -la' }, raw: block });
  });

  test('tolerates code fences around the block and around the JSON, and spaces inside tags', () => {
    const text =
      '```xml\n<tool_code >\n  <name> read_file </name>\n<parameters >\n```json\n{"path": "a.txt"}\n```\n</parameters>\n</tool_code>\n```';
    expect(parseToolReply(text, TOOLS)).toMatchObject({ kind: 'call', name: 'read_file', input: { path: 'a.txt' } });
  });

  test('missing <parameters> or an empty one means {}; a missing </tool_code> is tolerated', () => {
    expect(parseToolReply('<tool_code><name>done</name></tool_code>', TOOLS)).toMatchObject({ input: {} });
    expect(parseToolReply('<tool_code><name>done</name><parameters> </parameters>', TOOLS)).toMatchObject({
      kind: 'call',
      input: {},
    });
  });

  test('parameters may contain tags, braces and quotes inside JSON strings', () => {
    const input = { content: '</parameters></tool_code><tool_code>{"x": "}"}\\' };
    expect(parseToolReply(call('bash', JSON.stringify(input)), TOOLS)).toMatchObject({ kind: 'call', input });
  });
});

describe('parseToolReply: final answers', () => {
  test('a reply without a block is the final answer, trimmed', () => {
    expect(parseToolReply('  All done: 3 files.\n', TOOLS)).toEqual({ kind: 'final', text: 'All done: 3 files.' });
  });

  test('<final_answer> gives its content, even when it mentions <tool_code> later', () => {
    expect(parseToolReply('Thinking…\n<final_answer>\n42\n</final_answer> trailing', TOOLS)).toEqual({
      kind: 'final',
      text: '42',
    });
    expect(parseToolReply('<final_answer>Use <tool_code> blocks', TOOLS)).toEqual({
      kind: 'final',
      text: 'Use <tool_code> blocks',
    });
  });
});

describe('parseToolReply: malformed blocks get an observation that names the fault and shows the format', () => {
  const cases: [string, string, RegExp][] = [
    ['unknown tool', call('rm_rf', '{}'), /Tool 'rm_rf' not found\. Available tools: bash, read_file, done/],
    ['bad JSON', call('bash', '{"command": ls}'), /not valid JSON/],
    ['unbalanced JSON', call('bash', '{"command": "ls"'), /not one JSON object/],
    ['an array', call('bash', '["ls"]'), /not one JSON object: a JSON value that is not an object/],
    ['two blocks', call('bash', '{"command":"a"}') + call('bash', '{"command":"b"}'), /more than one <tool_code>/],
    ['no name', '<tool_code><parameters>{}</parameters></tool_code>', /no <name> element/],
    ['empty name', '<tool_code><name> </name></tool_code>', /<name> element is empty/],
    ['unclosed name', '<tool_code><name>bash', /no closing <\/name>/],
    ['unclosed parameters', '<tool_code><name>bash</name><parameters>{"a": 1}', /must be followed by <\/parameters>/],
    ['nested block', '<tool_code><name>bash</name><tool_code>', /opens inside another/],
    ['text after the JSON', call('bash', '{"command": "ls"} please'), /must be followed by <\/parameters>/],
  ];
  test.each(cases)('%s', (_label, text, reason) => {
    const observation = observationOf(parseToolReply(text, TOOLS));
    expect(observation).toMatch(reason);
    expect(observation).toContain(TOOL_CALL_FORMAT);
    expect(observation.startsWith('<observation status="error">')).toBe(true);
  });

  test('a huge unknown name is cut in the observation', () => {
    const observation = observationOf(parseToolReply(call('x'.repeat(100_000), '{}'), TOOLS));
    expect(observation.length).toBeLessThan(1000);
  });
});

describe('formatObservation', () => {
  test('wraps the content with the tool name, marks errors, escapes the name', () => {
    expect(formatObservation('bash', 'out', false)).toBe('<observation tool="bash">\nout\n</observation>');
    expect(formatObservation('a"<b', 'boom', true)).toBe(
      '<observation tool="a&quot;&lt;b" status="error">\nboom\n</observation>',
    );
  });
});

describe('properties', () => {
  const name = fc.constantFrom(...TOOLS);
  const input = fc.dictionary(fc.string(), fc.jsonValue());
  const prose = fc.string().filter((s) => !s.includes('<tool_code') && !s.includes('<final_answer'));

  test('a rendered call round-trips, whatever the arguments and the prose before it', () => {
    fc.assert(
      fc.property(prose, name, input, fc.boolean(), (before, tool, args, pretty) => {
        const json = pretty ? JSON.stringify(args, null, 2) : JSON.stringify(args);
        const reply = parseToolReply(`${before}${call(tool, json)}`, TOOLS);
        // JSON round trip: -0 becomes 0, as it would on the wire.
        expect(reply).toEqual({ kind: 'call', name: tool, input: JSON.parse(json), raw: call(tool, json) });
      }),
    );
  });

  test('never throws, and always answers one of the three kinds, on arbitrary text', () => {
    const fragments = fc.constantFrom(
      '<tool_code>',
      '</tool_code>',
      '<name>',
      '</name>',
      '<parameters>',
      '</parameters>',
      '<final_answer>',
      '{',
      '}',
      '"',
      '\\',
      '```',
      'bash',
      ' ',
    );
    const text = fc.oneof(
      fc.string(),
      fc.array(fc.oneof(fragments, fc.string()), { maxLength: 30 }).map((a) => a.join('')),
    );
    fc.assert(
      fc.property(text, (t) => {
        const reply = parseToolReply(t, TOOLS);
        expect(['call', 'final', 'malformed']).toContain(reply.kind);
        if (reply.kind === 'call') expect(TOOLS).toContain(reply.name);
      }),
      { numRuns: 2000 },
    );
  });

  test('text without any tag is returned as the final answer, trimmed', () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes('<')),
        (t) => {
          expect(parseToolReply(t, TOOLS)).toEqual({ kind: 'final', text: t.trim() });
        },
      ),
    );
  });

  // No timing is asserted: a quadratic scan of these 1 MB texts would run for hours, past the test's timeout.
  test('parsing is linear: adversarial repetitions of 1 MB are read', () => {
    const patterns = ['<tool_code>', '<name>', '<parameters>{', '<parameters>{"', '<', '</name', '<final_answer'];
    for (const p of patterns) {
      const big = `<tool_code><name>bash</name>${p.repeat(Math.ceil(1_000_000 / p.length))}`;
      expect(['call', 'malformed']).toContain(parseToolReply(big, TOOLS).kind);
      expect(['final', 'malformed']).toContain(parseToolReply(p.repeat(Math.ceil(1_000_000 / p.length)), TOOLS).kind);
    }
  });
});
