import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { formatEvent } from '../../src/cli/format';
import { AnthropicProvider } from '../../src/models/anthropic';
import { ScriptedModel, toolUse } from '../../src/models/scripted';
import { DONE_TOOL_NAME, EVENT_TOOL_OUTPUT_CHARS } from '../../src/shared';
import { runCli } from '../support/cli-process';
import { withLiveProgress } from '../support/slow-stream';
import { useSlowStreamSuite } from '../support/workflow-suite';
import { testAddress, withWorker } from '../support/temporal';

/**
 * What `run` and `follow` print of a step: under the text protocol the model's words, never its
 * `<tool_code>` XML (live or from the events), then the call as a tool call; the `done` call with
 * its summary; a tool's output over several lines, folded. The built CLI against a real worker
 * whose model streams slowly (the real Anthropic provider on a local server) or is scripted.
 */

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('tool output lines', () => {
  const finished = (preview: string, truncated?: boolean) =>
    formatEvent(
      {
        seq: 1,
        kind: 'tool_call_finished',
        toolUseId: 't',
        name: 'bash',
        isError: false,
        preview,
        ...(truncated ? { truncated } : {}),
      },
      'run-7',
    )!;

  test('a one-line output stays on the result line; a blank one says so', () => {
    expect(finished('exit code 0\n')).toBe('  ✓ bash: exit code 0');
    expect(finished('\n  \n')).toBe('  ✓ bash: (no output)');
  });

  test('a longer output shows its first lines indented, then how many more and where the rest is', () => {
    const output = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const shown = finished(output, true).split('\n');
    expect(shown[0]).toBe('  ✓ bash: line 0');
    expect(shown.slice(1, 8)).toEqual(Array.from({ length: 7 }, (_, i) => `      line ${i + 1}`));
    expect(shown[8]).toBe(
      `      … 22 more lines; output cut at ${EVENT_TOOL_OUTPUT_CHARS.toLocaleString('en-US')} characters: durable-agent transcript run-7 has all of it`,
    );
    expect(shown).toHaveLength(9);
  });

  test('the done call shows its summary', () => {
    const started = (input: unknown) =>
      formatEvent({ seq: 1, kind: 'tool_call_started', toolUseId: 'd', name: DONE_TOOL_NAME, input }, 'run-7');
    expect(started({ summary: 'Fixed the failing test.\nDetails follow.' })).toBe('  → done: Fixed the failing test.');
    expect(started({})).toBe('  → done: (no summary)');
  });
});

describe('the built CLI', () => {
  const slow = useSlowStreamSuite('narration-cli');
  const tag = randomUUID().slice(0, 8);

  beforeAll(async () => {
    await fs.writeFile(
      path.join(slow.workspace, 'notes.txt'),
      Array.from({ length: 12 }, (_, i) => `note ${i}`).join('\n'),
    );
  });

  const cli = (args: string[], taskQueue: string) =>
    runCli(args, { TEMPORAL_ADDRESS: testAddress(), TEMPORAL_TASK_QUEUE: taskQueue, ANTHROPIC_API_KEY: '' }).done;
  const runArgs = (id: string, ...extra: string[]) => [
    'run',
    'read the notes',
    '--model',
    'claude-slow',
    '--workspace',
    slow.workspace,
    '--id',
    id,
    '--no-inline-worker',
    ...extra,
  ];

  test('text protocol: run and follow print the thought and the call, never the XML', async () => {
    const thought = 'Let me look at the notes before I answer.';
    slow.server.enqueue(
      {
        text: `${thought}\n\`\`\`xml\n<tool_code>\n<name>read_file</name>\n<parameters>{"path": "notes.txt"}</parameters>\n</tool_code>\n\`\`\``,
        chunkChars: 4,
        delayMs: 25,
      },
      { text: '<final_answer>The notes count to eleven.</final_answer>', chunkChars: 4, delayMs: 25 },
    );
    const model = new AnthropicProvider({ apiKey: 'sk-test', baseURL: slow.server.url });
    const id = `narration-${tag}-xml`;
    await withWorker(slow.env, { model: withLiveProgress(model) }, async (taskQueue) => {
      const run = await cli(runArgs(id, '--tool-protocol', 'xml'), taskQueue);
      const follow = await cli(['follow', id], taskQueue);
      for (const out of [run, follow]) {
        if (process.env.DA_SHOW_OUTPUT) process.stderr.write(out.stdout);
        expect(out.code).toBe(0);
        expect(out.stdout).not.toMatch(/<\/?(tool_code|name|parameters|final_answer)>|```/);
        expect(count(out.stdout, thought)).toBe(1);
        expect(out.stdout).toContain('  → read_file notes.txt');
        expect(out.stdout).toContain('  ✓ read_file: ');
        expect(out.stdout).toMatch(/^ {6} *4 {2}note 3$/m);
        expect(out.stdout).toContain('… 4 more lines');
        expect(count(out.stdout, 'The notes count to eleven.')).toBe(1);
        expect(out.stdout.indexOf(thought)).toBeLessThan(out.stdout.indexOf('→ read_file'));
      }
    });
  }, 120_000);

  test('the done call is printed with its summary, and the answer once', async () => {
    const model = new ScriptedModel([
      toolUse([{ name: DONE_TOOL_NAME, input: { summary: 'Read the notes: they count to eleven.' } }]),
    ]);
    await withWorker(slow.env, { model }, async (taskQueue) => {
      const out = await cli(runArgs(`narration-${tag}-done`, '--require-done-tool'), taskQueue);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain('  → done: Read the notes: they count to eleven.');
      expect(out.stdout).toContain('  ✓ done: Recorded. The run is finished.');
      expect(count(out.stdout, 'Read the notes: they count to eleven.')).toBe(2);
    });
  }, 60_000);
});
