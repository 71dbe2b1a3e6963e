import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  decideOfflineTurn,
  formatBytes,
  OfflineDemoModel,
  parseGlobOutput,
  parseWcOutput,
  planFromPrompt,
  shellQuote,
} from '../../src/models/offline';
import type { ModelCallContext } from '../../src/models/types';
import type { ContentBlock, Message, ModelRequest, ModelResponse, ToolSpec, ToolUseBlock } from '../../src/shared';
import { costOf, OFFLINE_MODEL, textOf } from '../../src/shared';

const GLOB: ToolSpec = {
  name: 'glob',
  description: 'Find files',
  input_schema: {
    type: 'object',
    properties: { pattern: { type: 'string' }, path: { type: 'string' } },
    required: ['pattern'],
    additionalProperties: false,
  },
};
const BASH: ToolSpec = {
  name: 'bash',
  description: 'Run a command',
  input_schema: {
    type: 'object',
    properties: { command: { type: 'string' }, timeout: { type: 'number' }, description: { type: 'string' } },
    required: ['command'],
    additionalProperties: false,
  },
};
const TOOLS = [GLOB, BASH];
const PROMPT = 'List the TypeScript files here and tell me which one is largest';

const ctx: ModelCallContext = { signal: new AbortController().signal, heartbeat: () => undefined };

/** A tiny loop driver: the model's turn is appended, tool results are supplied by the test. */
class Conversation {
  readonly messages: Message[];
  constructor(
    prompt: string,
    readonly tools: ToolSpec[] = TOOLS,
  ) {
    this.messages = [{ role: 'user', content: prompt }];
  }
  request(extra: Partial<ModelRequest> = {}): ModelRequest {
    return { model: OFFLINE_MODEL, messages: this.messages, tools: this.tools, maxTokens: 4096, ...extra };
  }
  async turn(model = new OfflineDemoModel()): Promise<ModelResponse> {
    const response = await model.call(this.request(), ctx);
    this.messages.push({ role: 'assistant', content: response.content });
    return response;
  }
  answer(toolUse: ToolUseBlock, content: string, isError = false): void {
    this.messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: toolUse.id, content, is_error: isError }],
    });
  }
}

function onlyToolUse(content: ContentBlock[]): ToolUseBlock {
  const uses = content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
  expect(uses).toHaveLength(1);
  return uses[0]!;
}

describe('OfflineDemoModel: the demo conversation', () => {
  test('glob → wc -c → a final answer naming the largest file with its size', async () => {
    const convo = new Conversation(PROMPT);

    const first = await convo.turn();
    expect(first.stopReason).toBe('tool_use');
    const glob = onlyToolUse(first.content);
    expect(glob).toMatchObject({ name: 'glob', input: { pattern: '**/*.ts' } });
    expect(textOf(first.content)).toContain('TypeScript files');
    convo.answer(glob, 'src/a.ts\nsrc/models/anthropic.ts\ntest/b.ts');

    const second = await convo.turn();
    expect(second.stopReason).toBe('tool_use');
    const bash = onlyToolUse(second.content);
    expect(bash.name).toBe('bash');
    expect(bash.input).toEqual({
      command: "wc -c -- 'src/a.ts' 'src/models/anthropic.ts' 'test/b.ts' | sort -rn | head -n 16",
      description: 'Measure file sizes in bytes',
    });
    expect(bash.id).not.toBe(glob.id);
    convo.answer(bash, '  120 src/a.ts\n 8300 src/models/anthropic.ts\n   45 test/b.ts\n 8465 total\nExit code: 0');

    const final = await convo.turn();
    expect(final.stopReason).toBe('end_turn');
    expect(final.content.every((b) => b.type === 'text')).toBe(true);
    const answer = textOf(final.content);
    expect(answer).toContain('I found 3 TypeScript files matching `**/*.ts`');
    expect(answer).toContain('The largest is `src/models/anthropic.ts` at 8.1 KB (8,300 bytes).');
    expect(answer).not.toContain('total');
    expect(answer).toMatch(/offline demo model/);
    expect(answer).toContain('ANTHROPIC_API_KEY');
    // Largest first.
    expect(answer).toContain(
      '- `src/models/anthropic.ts` — 8.1 KB (8,300 bytes)\n- `src/a.ts` — 120 bytes\n- `test/b.ts` — 45 bytes',
    );
  });

  test('is stateless: a fresh instance continues the same conversation identically', async () => {
    const convo = new Conversation(PROMPT);
    const glob = onlyToolUse((await convo.turn()).content);
    convo.answer(glob, 'x.ts\ny.ts');
    const a = await new OfflineDemoModel().call(convo.request(), ctx);
    const b = await new OfflineDemoModel().call(convo.request(), ctx);
    expect(a).toEqual(b);
    expect(onlyToolUse(a.content).name).toBe('bash');
  });

  test('reports plausible token usage that costs nothing', async () => {
    const response = await new Conversation(PROMPT).turn();
    expect(response.usage.inputTokens).toBeGreaterThan(10);
    expect(response.usage.outputTokens).toBeGreaterThan(5);
    expect(costOf(OFFLINE_MODEL, response.usage)).toBe(0);
    expect(JSON.parse(JSON.stringify(response))).toEqual(response);
  });

  test('the generated wc command runs in bash on awkward file names and its output parses', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'offline-wc-'));
    try {
      const names = ["it's here.ts", 'space name.ts', '-dash.ts', 'nested/$(echo pwned).ts', 'big.ts'];
      mkdirSync(path.join(dir, 'nested'));
      names.forEach((name, i) => writeFileSync(path.join(dir, name), 'x'.repeat(10 * (i + 1))));
      const convo = new Conversation(PROMPT);
      convo.answer(onlyToolUse((await convo.turn()).content), names.join('\n'));
      const bash = onlyToolUse((await convo.turn()).content);
      const output = execFileSync('bash', ['-c', (bash.input as { command: string }).command], { cwd: dir }).toString();
      convo.answer(bash, `${output}\nExit code: 0`);
      const answer = textOf((await convo.turn()).content);
      expect(answer).toContain('The largest is `big.ts` at 50 bytes.');
      expect(answer).toContain("`it's here.ts` — 10 bytes");
      expect(answer).toContain('`nested/$(echo pwned).ts` — 40 bytes');
      expect(answer).toContain('`-dash.ts` — 30 bytes');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('OfflineDemoModel: tools missing or failing', () => {
  test('without a glob tool it explains that in a final text', async () => {
    const response = await new Conversation(PROMPT, [BASH]).turn();
    expect(response.stopReason).toBe('end_turn');
    expect(textOf(response.content)).toContain('no `glob` tool (available tools: bash)');
  });

  test('with no tools at all it says so', async () => {
    const response = await new Conversation(PROMPT, []).turn();
    expect(textOf(response.content)).toContain('available tools: none');
  });

  test('a glob error ends with a text naming the error', async () => {
    const convo = new Conversation(PROMPT);
    convo.answer(onlyToolUse((await convo.turn()).content), "Error: Directory not found: 'src'.", true);
    const final = await convo.turn();
    expect(final.stopReason).toBe('end_turn');
    expect(textOf(final.content)).toContain("the glob tool reported an error: Error: Directory not found: 'src'.");
  });

  test('no matches ends with a text saying nothing matched', async () => {
    const convo = new Conversation('list the python files');
    const glob = onlyToolUse((await convo.turn()).content);
    expect(glob.input).toEqual({ pattern: '**/*.py' });
    convo.answer(glob, "No files match '**/*.py' in ..");
    expect(textOf((await convo.turn()).content)).toContain('No Python files match `**/*.py` in this workspace.');
  });

  test('without bash it lists the files and says sizes could not be measured', async () => {
    const convo = new Conversation(PROMPT, [GLOB]);
    convo.answer(onlyToolUse((await convo.turn()).content), 'a.ts\nb.ts');
    const final = await convo.turn();
    expect(final.stopReason).toBe('end_turn');
    const answer = textOf(final.content);
    expect(answer).toContain('- `a.ts`\n- `b.ts`');
    expect(answer).toContain('no `bash` tool');
  });

  test('a failed size command is explained, with the files still listed', async () => {
    const convo = new Conversation(PROMPT);
    convo.answer(onlyToolUse((await convo.turn()).content), 'a.ts');
    convo.answer(onlyToolUse((await convo.turn()).content), 'bash: wc: command not found\nExit code: 127', true);
    const answer = textOf((await convo.turn()).content);
    expect(answer).toContain('measuring their sizes failed: bash: wc: command not found');
    expect(answer).toContain('- `a.ts`');
  });

  test('partial wc output (some paths failed) still names the largest and counts the rest', async () => {
    const convo = new Conversation(PROMPT);
    convo.answer(onlyToolUse((await convo.turn()).content), 'a.ts\ngone.ts\nc.ts');
    convo.answer(
      onlyToolUse((await convo.turn()).content),
      'wc: gone.ts: No such file or directory\n 10 a.ts\n 99 c.ts\n109 total\nExit code: 1',
      true,
    );
    const answer = textOf((await convo.turn()).content);
    // One match was not measured: the answer names the largest of those measured, not "the largest".
    expect(answer).toContain('The largest of the 2 measured is `c.ts` at 99 bytes.');
    expect(answer).toContain('1 other file was not measured.');
  });

  test('measures every listed file, and claims no largest when the glob listed only some matches', async () => {
    const measure = async (listing: string) => {
      const convo = new Conversation(PROMPT);
      convo.answer(onlyToolUse((await convo.turn()).content), listing);
      const bash = onlyToolUse((await convo.turn()).content);
      const command = (bash.input as { command: string }).command;
      const files = [...command.matchAll(/'(f\d+\.ts)'/g)].map((m) => m[1]!);
      // `wc` prints every size; the command keeps the 15 largest and the total.
      convo.answer(
        bash,
        `${files.length} f${files.length - 1}.ts\n${files.length - 1} f${files.length - 2}.ts\n99 total`,
      );
      return { files, answer: textOf((await convo.turn()).content) };
    };
    const all = Array.from({ length: 250 }, (_, i) => `f${i}.ts`);
    const every = await measure(all.join('\n'));
    expect(every.files).toEqual(all);
    expect(every.answer).toContain('I found 250 TypeScript files');
    expect(every.answer).toContain('The largest is `f249.ts` at 250 bytes.');
    expect(every.answer).toContain('- … and 248 more');
    expect(every.answer).not.toContain('not measured');

    const listed = Array.from({ length: 1000 }, (_, i) => `f${i}.ts`);
    const some = await measure(`${listed.join('\n')}\n… and 200 more files (1200 matches in total)`);
    expect(some.files).toHaveLength(1000);
    expect(some.answer).toContain('I found 1,200 TypeScript files');
    expect(some.answer).toContain('The largest of the 1000 measured is `f999.ts`');
    expect(some.answer).toContain('200 other files were not measured.');
  });
});

describe('OfflineDemoModel: summary requests (tool_choice none)', () => {
  test('answers with text only, from the work done so far', async () => {
    const convo = new Conversation(PROMPT);
    convo.answer(onlyToolUse((await convo.turn()).content), 'a.ts\nb.ts');
    const request = convo.request({
      toolChoice: { type: 'none' },
      messages: [...convo.messages, { role: 'user', content: 'You have reached the maximum number of iterations.' }],
    });
    const response = await new OfflineDemoModel().call(request, ctx);
    expect(response.stopReason).toBe('end_turn');
    expect(response.content.every((b) => b.type === 'text')).toBe(true);
    const answer = textOf(response.content);
    expect(answer).toContain('I found 2 TypeScript files');
    expect(answer).toContain('I stopped before measuring their sizes.');
  });

  test('an instruction merged into the last tool results (as summarizeRun sends it) keeps those results', async () => {
    const convo = new Conversation(PROMPT);
    convo.answer(onlyToolUse((await convo.turn()).content), 'a.ts\nb.ts');
    const last = convo.messages[convo.messages.length - 1]!;
    const merged: Message = {
      role: 'user',
      content: [
        ...(last.content as ContentBlock[]),
        { type: 'text', text: 'You have reached the maximum number of iterations.' },
      ],
    };
    const request = convo.request({ toolChoice: { type: 'none' }, messages: [...convo.messages.slice(0, -1), merged] });
    const answer = textOf((await new OfflineDemoModel().call(request, ctx)).content);
    expect(answer).toContain('I found 2 TypeScript files');
    expect(answer).not.toContain('got no result back');
  });

  test('before any tool ran, it says nothing was done', async () => {
    const convo = new Conversation(PROMPT);
    const request = convo.request({
      toolChoice: { type: 'none' },
      messages: [...convo.messages, { role: 'user', content: 'Summarize.' }],
    });
    const response = await new OfflineDemoModel().call(request, ctx);
    expect(response.content.every((b) => b.type === 'text')).toBe(true);
    expect(textOf(response.content)).toContain('nothing was done yet');
  });
});

describe('offline helpers', () => {
  test.each([
    [PROMPT, '**/*.ts'],
    ['Which JavaScript file is biggest?', '**/*.{js,mjs,cjs}'],
    ['find python code', '**/*.py'],
    ['list the golang sources', '**/*.go'],
    ['show the go files', '**/*.go'],
    ['let us go and look around', '**/*'],
    ['rust crates?', '**/*.rs'],
    ['summarize the markdown docs', '**/*.md'],
    ['Java classes please', '**/*.java'],
    ['how many .txt files are there', '**/*.txt'],
    ['sizes of src/**/*.test.ts please', 'src/**/*.test.ts'],
    ['hello there', '**/*'],
  ])('planFromPrompt(%j) → %s', (prompt, pattern) => {
    expect(planFromPrompt(prompt).pattern).toBe(pattern);
  });

  test('an unrelated prompt still explores, and says why', () => {
    const turn = decideOfflineTurn({
      model: OFFLINE_MODEL,
      messages: [{ role: 'user', content: 'hello' }],
      tools: TOOLS,
      maxTokens: 10,
    });
    expect(textOf(turn.content)).toContain('Offline, I can only explore files');
    expect(turn.content.some((b) => b.type === 'tool_use')).toBe(true);
  });

  test('a follow-up question starts a new task after the previous answer', async () => {
    const convo = new Conversation(PROMPT);
    convo.answer(onlyToolUse((await convo.turn()).content), 'a.ts');
    convo.answer(onlyToolUse((await convo.turn()).content), '5 a.ts');
    await convo.turn();
    convo.messages.push({ role: 'user', content: 'and the python files?' });
    const next = await convo.turn();
    expect(onlyToolUse(next.content).input).toEqual({ pattern: '**/*.py' });
  });

  test('parseGlobOutput skips notes and counts unlisted matches', () => {
    expect(parseGlobOutput("No files match '*.x' in .")).toEqual({ files: [], unlisted: 0 });
    expect(
      parseGlobOutput('a.ts\nb c.ts\n… and 12 more files (1012 matches in total; only the first 1000 are listed).'),
    ).toEqual({ files: ['a.ts', 'b c.ts'], unlisted: 12 });
    expect(parseGlobOutput('["x.ts","y.ts"]')).toEqual({ files: ['x.ts', 'y.ts'], unlisted: 0 });
  });

  test('parseWcOutput reads sizes and drops the total line', () => {
    expect(parseWcOutput('  3 a b.ts\n 10 total\nExit code: 0')).toEqual([{ path: 'a b.ts', bytes: 3 }]);
    expect(parseWcOutput('7 total', ['total'])).toEqual([{ path: 'total', bytes: 7 }]);
  });

  test('shellQuote and formatBytes', () => {
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(formatBytes(1)).toBe('1 byte');
    expect(formatBytes(1023)).toBe('1,023 bytes');
    expect(formatBytes(1536)).toBe('1.5 KB (1,536 bytes)');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MB (5,242,880 bytes)');
  });
});
