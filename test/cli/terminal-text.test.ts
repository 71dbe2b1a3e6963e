import fc from 'fast-check';
import { formatApproval, inputLines, shellWord } from '../../src/cli/approval-view';
import { formatEvent, formatResult, formatState } from '../../src/cli/format';
import { formatRunList, type RunListing } from '../../src/cli/list-command';
import { inertJson, visibleLine, visibleText } from '../../src/cli/terminal-text';
import { INPUT_PREVIEW_CHARS, previewInput, type AgentRunState } from '../../src/shared';

/**
 * Approval spoofing: text a model or a tool controls must be inert on a terminal. Every character
 * a terminal would obey (C0 but newline and tab in a body, DEL, C1, bidi controls, line
 * separators) comes out as a visible stand-in; every other character comes out as it was.
 */

/** What a terminal would act on in a multi-line body. */
// eslint-disable-next-line no-control-regex
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
// eslint-disable-next-line no-control-regex
const OBEYED_ON_ONE_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Strings rich in the characters that matter, mixed with ordinary text. */
const hostile = fc
  .array(
    fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom(
        '\x1b',
        '\x1b[2K',
        '\x1b]52;c;ZXZpbA==\x07',
        '\x9b',
        '\r',
        '\n',
        '\t',
        '\x7f',
        '\u202e',
        '\u2066',
      ),
      fc.integer({ min: 0, max: 0xa0 }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: 'binary' }),
    ),
  )
  .map((parts) => parts.join(''));

/** The characters of `s` a terminal would not act on, in order. */
const kept = (s: string, obeyed: RegExp) => [...s].filter((c) => !obeyed.test(c));

/** True when `chars` occur in `text` in this order (stand-ins may come between them). */
function inOrder(chars: string[], text: string): boolean {
  let at = 0;
  for (const c of chars) {
    at = text.indexOf(c, at);
    if (at === -1) return false;
    at += c.length;
  }
  return true;
}

describe('approval spoofing: the sanitizer', () => {
  test('a body keeps newlines and tabs and shows every other control, losing no ordinary character', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        const shown = visibleText(s);
        expect(shown).not.toMatch(OBEYED);
        // Ordinary characters all survive, in order: the stand-ins are added around them.
        expect(inOrder(kept(s, OBEYED), shown)).toBe(true);
        expect(shown.split('\n')).toHaveLength(s.split('\n').length);
      }),
    );
  });

  test('one line shows newlines and tabs as well, so a value cannot start a line of its own', () => {
    fc.assert(
      fc.property(hostile, (s) => {
        const shown = visibleLine(s);
        expect(shown).not.toMatch(OBEYED_ON_ONE_LINE);
        expect(inOrder(kept(s, OBEYED_ON_ONE_LINE), shown)).toBe(true);
      }),
    );
  });

  test('text without controls passes unchanged, and text printed in pieces comes out as printed whole', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        fc.pre(!OBEYED.test(s));
        expect(visibleText(s)).toBe(s);
      }),
    );
    fc.assert(
      fc.property(hostile, hostile, (a, b) => {
        expect(visibleText(a + b)).toBe(visibleText(a) + visibleText(b));
        expect(visibleLine(a + b)).toBe(visibleLine(a) + visibleLine(b));
      }),
    );
  });

  test('each control has a stand-in that names it', () => {
    expect(visibleText('a\x1b[31mb\rc\x07\x00\x7f')).toBe('a␛[31mb␍c␇␀␡');
    expect(visibleText('\x9b2J \u202eevil\u202c \u2066x\u2069 \u2028')).toBe(
      '⟨U+009B⟩2J ⟨U+202E⟩evil⟨U+202C⟩ ⟨U+2066⟩x⟨U+2069⟩ ⟨U+2028⟩',
    );
    expect(visibleLine('a\nb\tc')).toBe('a␊b␉c');
  });

  test('--json output stays the same JSON value and carries no raw control a terminal obeys', () => {
    const value = fc.jsonValue({ maxDepth: 3 }).chain((v) => fc.tuple(fc.constant(v), hostile));
    fc.assert(
      fc.property(value, ([v, s]) => {
        const json = JSON.stringify({ v, s }, null, 2);
        const inert = inertJson(json);
        expect(JSON.parse(inert)).toEqual(JSON.parse(json));
        expect(inert).not.toMatch(OBEYED);
      }),
    );
  });
});

describe('approval spoofing: what an approval shows', () => {
  test('an escape sequence in a command cannot make it read as another command', () => {
    const command = 'touch EVIL_RAN; \x1b[2K\x1b[1Gls -la';
    const shown = formatApproval('run-1', 'toolu_1', 'bash', { command });
    expect(shown).not.toMatch(OBEYED);
    expect(shown).toContain('│ command: touch EVIL_RAN; ␛[2K␛[1Gls -la');
  });

  test('the whole command is shown, line by line, however long: no summary hides its tail', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 300 }), { minLength: 1, maxLength: 8 }),
        (lines) => {
          const command = lines.join('\n');
          fc.pre(!OBEYED.test(command) && !/[ \t]{16}/.test(command) && !command.includes('\t'));
          const shown = inputLines({ command });
          // One line: `command: <it>`; several: `command: (N lines)` and then each, indented.
          const body =
            lines.length === 1
              ? [shown[0]!.replace(/^ {4}│ command: /, '')]
              : shown.slice(1).map((l) => l.replace(/^ {4}│ {3}/, ''));
          expect(body.join('\n')).toBe(command === '' ? '""' : command);
          for (const l of shown) expect(l).toMatch(/^ {4}│ /);
        },
      ),
    );
  });

  test('a long run of blanks that would push a command out of sight is counted', () => {
    const shown = inputLines({ command: `ls${' '.repeat(300)}; rm -rf ~` });
    expect(shown).toEqual(['    │ command: ls⟨300 blanks⟩; rm -rf ~']);
  });

  test('an input the run recorded cut is marked as cut, with where to read it whole', () => {
    const cut = previewInput(
      { command: `echo ${'a'.repeat(INPUT_PREVIEW_CHARS)}; touch EVIL_RAN` },
      INPUT_PREVIEW_CHARS,
    );
    expect(formatApproval('run-1', 'toolu_1', 'bash', cut)).toMatch(/! this input is cut where '…' shows/);
    expect(formatApproval('run-1', 'toolu_1', 'bash', { command: 'ls' })).not.toContain('is cut');
  });

  test('a tool call id that is not a plain word is quoted in the commands to copy', () => {
    expect(shellWord('toolu_01AbC')).toBe('toolu_01AbC');
    expect(shellWord("x; rm -rf ~ 'q'")).toBe(`'x; rm -rf ~ '\\''q'\\'''`);
    const shown = formatApproval('run-1', 'x; touch EVIL', 'bash', { command: 'ls' });
    expect(shown).toContain("durable-agent approve run-1 'x; touch EVIL'");
  });
});

describe('approval spoofing: every printed line from model or tool content is inert', () => {
  const evil = 'ok\x1b]0;pwned\x07\x1b]52;c;ZXZpbA==\x07\r\x1b[2K\u202e';

  test('progress lines: tool calls, results, notices, failures, messages, answers', () => {
    const events = [
      { seq: 1, kind: 'tool_call_started', toolUseId: 't', name: `bash${evil}`, input: { command: evil } },
      { seq: 2, kind: 'tool_call_finished', toolUseId: 't', name: 'bash', isError: false, preview: evil },
      { seq: 3, kind: 'notice', message: evil },
      { seq: 4, kind: 'model_call_failed', iteration: 1, error: evil },
      { seq: 5, kind: 'user_message', message: evil },
      { seq: 6, kind: 'approval_resolved', toolUseId: evil, name: evil, approved: false, reason: evil },
      { seq: 7, kind: 'answer', text: `${evil}\nline two` },
      { seq: 8, kind: 'run_started', model: evil, maxIterations: 3, prompt: 'p' },
    ] as const;
    for (const event of events) {
      const line = formatEvent(event, 'run-1') ?? '';
      expect(line).toContain('ok␛]0;pwned␇');
      expect(line).not.toMatch(OBEYED);
    }
  });

  test('status lines and the result summary', () => {
    const state: AgentRunState = {
      status: 'awaiting_approval',
      iteration: 1,
      maxIterations: 5,
      usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
      costUsd: 0,
      activeTools: [evil],
      model: evil,
      pendingApprovals: [{ toolUseId: evil, name: evil, input: { command: evil }, deadline: 0 }],
      pendingMessages: 0,
      session: false,
    };
    const status = formatState('run-1', state);
    expect(status).not.toMatch(OBEYED);
    expect(status).toContain('│ command: ok␛]0;pwned␇');
    const result = formatResult({
      exitReason: 'failed',
      finalText: evil,
      iterations: 1,
      usage: state.usage,
      costUsd: 0,
      model: evil,
      error: { type: 'x', message: evil },
    });
    expect(result).not.toMatch(OBEYED);
  });

  test('list rows', () => {
    const listing: RunListing = {
      workflowId: `id${evil}`,
      runId: 'r',
      status: 'running',
      executionStatus: 'RUNNING',
      iterations: 1,
      costUsd: 0,
      model: evil,
      startTime: new Date(0).toISOString(),
      closeTime: null,
      taskQueue: 'q',
    };
    const table = formatRunList([listing]);
    expect(table).not.toMatch(OBEYED);
    expect(table).toContain('idok␛]0;pwned␇');
  });
});
