import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { UNSANDBOXED_NOTE } from '../../src/tools/bash';
import { processRegistry } from '../../src/sandbox';
import { liveProcessesWith, uniqueSleep, waitUntil } from '../support/processes';
import { makeContext, makeTempDir } from './helpers';

// Every behaviour holds sandboxed (the default) and unsandboxed (DURABLE_AGENT_SANDBOX=off), where
// each result ends with a warning line.
describe.each(['bwrap', 'off'] as const)('bash tool (sandbox %s)', (mode) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(async () => {
    await processRegistry.stopAll();
    cleanup();
  });
  const registry = new ToolRegistry([createBashTool({ heartbeatIntervalMs: 100, sandbox: mode })]);
  const run = (input: unknown, overrides = {}) => registry.run('bash', input, makeContext(dir, overrides));
  /** The content of a result: its lines, plus the warning when unsandboxed. */
  const said = (text: string) => (mode === 'off' ? `${text}\n${UNSANDBOXED_NOTE}` : text);

  test('runs in the workspace and shows the exit code', async () => {
    const result = await run({ command: 'pwd' });
    expect(result).toEqual({ content: said(`${dir}\nExit code: 0`), isError: false });
  });

  test('a non-zero exit is an error result with the exit code', async () => {
    const result = await run({ command: 'echo failing; exit 3' });
    expect(result).toEqual({ content: said('failing\nExit code: 3'), isError: true });
  });

  test('a NUL byte in the command is refused in words', async () => {
    await expect(run({ command: 'echo a\u0000b' })).resolves.toEqual({
      content: 'Error: the command contains a NUL byte, which no shell command can hold.',
      isError: true,
    });
  });

  test('no output says so', async () => {
    await expect(run({ command: 'true' })).resolves.toEqual({
      content: said('(no output)\nExit code: 0'),
      isError: false,
    });
  });

  test('stdout and stderr are combined in arrival order', async () => {
    const result = await run({ command: 'echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three' });
    expect(result.content).toBe(said('one\ntwo\nthree\nExit code: 0'));
  });

  test('stdin is /dev/null, so reading it ends at once', async () => {
    const result = await run({ command: 'cat; echo "read done"', timeout: 5000 });
    expect(result).toEqual({ content: said('read done\nExit code: 0'), isError: false });
  });

  test('the Anthropic API key of the worker is not visible to commands', async () => {
    process.env.ANTHROPIC_API_KEY = 'sk-test-secret';
    try {
      const result = await run({ command: 'echo "key=${ANTHROPIC_API_KEY:-unset}"' });
      expect(result.content).toBe(said('key=unset\nExit code: 0'));
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  test('short output writes no spill file', async () => {
    await run({ command: 'echo small' });
    expect(existsSync(path.join(dir, '.durable-agent'))).toBe(false);
  });

  test('multi-byte characters split across chunks survive', async () => {
    const result = await run({ command: "printf '\\xc3'; sleep 0.05; printf '\\xa9\\n'" });
    expect(result.content).toBe(said('é\nExit code: 0'));
  });

  test('long output is cut in the middle with a note saying how many characters were omitted and where the rest is', async () => {
    // 100,000 characters: lines "line-00000" … "line-09999" plus newline = 11 chars * 10,000 = 110,000.
    const result = await run({ command: 'for i in $(seq -w 0 9999); do echo "line-0$i"; done' });
    expect(result.isError).toBe(false);
    expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    const note = /\[… output truncated: (\d+) of (\d+) characters omitted\.[^\]]* …\]/.exec(result.content);
    expect(note).not.toBeNull();
    expect(Number(note?.[2])).toBe(110_000);
    // The whole output is in a spill file the model can page through.
    const spill = /saved in (\S+): page through it with read_file/.exec(result.content)?.[1];
    expect(spill).toBe('.durable-agent/spill/t1.log');
    const full = readFileSync(path.join(dir, spill ?? ''), 'utf8');
    expect(full.length).toBe(110_000);
    expect(full.endsWith('line-09999\n')).toBe(true);
    expect(result.content.startsWith('line-00000\nline-00001\n')).toBe(true);
    expect(result.content.endsWith(said('line-09999\nExit code: 0'))).toBe(true);
    // Kept + omitted accounts for every character of the output.
    const [head, tail] = result.content.replace(said('\nExit code: 0'), '\n').split(note?.[0] ?? '');
    expect((head ?? '').length - 2 + (tail ?? '').length - 2 + Number(note?.[1])).toBe(110_000);
    expect(result.content).not.toContain('[Output truncated'); // the registry cap did not cut the exit code
  });

  test('a timeout kills the command and says so', async () => {
    const started = Date.now();
    const result = await run({ command: 'echo started; sleep 30', timeout: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(result.content).toBe(said('started\nCommand timed out after 300 ms and was killed.'));
  });

  test('a timeout kills background children too (the whole process group)', async () => {
    const marker = uniqueSleep();
    const result = await run({ command: `sleep ${marker} & sleep ${marker}; wait`, timeout: 300 });
    expect(result.content).toContain('Command timed out after 300 ms');
    expect(await waitUntil(() => liveProcessesWith(marker).length === 0, 3000)).toBe(true);
  });

  test('a command that ignores SIGTERM is killed with SIGKILL', async () => {
    const marker = uniqueSleep();
    const started = Date.now();
    const result = await run({ command: `trap '' TERM; sleep ${marker} & sleep ${marker}; wait`, timeout: 300 });
    expect(result.content).toContain('Command timed out after 300 ms');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await waitUntil(() => liveProcessesWith(marker).length === 0, 3000)).toBe(true);
  });

  test('a stopped command gets SIGTERM first, so its traps run', async () => {
    const result = await run({
      command: `trap 'echo cleaning up; exit 7' TERM; sleep ${uniqueSleep()} & wait`,
      timeout: 500,
    });
    expect(result.content).toBe(said('cleaning up\nCommand timed out after 500 ms and was killed.'));
  });

  test('cancellation via the abort signal returns quickly and kills the process group', async () => {
    const marker = uniqueSleep();
    const controller = new AbortController();
    const started = Date.now();
    const pending = run({ command: `sleep ${marker} & sleep ${marker}; wait` }, { signal: controller.signal });
    // Wait until the shell has started its children before cancelling.
    expect(await waitUntil(() => liveProcessesWith(marker, 'sleep').length >= 2, 5000)).toBe(true);
    controller.abort();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/cancelled/);
    expect(await waitUntil(() => liveProcessesWith(marker).length === 0, 3000)).toBe(true);
  });

  test('the bash tool itself reports a cancellation when used without the registry', async () => {
    const tool = createBashTool({ sandbox: mode });
    const controller = new AbortController();
    const marker = uniqueSleep();
    const output = tool.execute(
      { command: `echo before; sleep ${marker}` },
      makeContext(dir, { signal: controller.signal }),
    );
    expect(await waitUntil(() => liveProcessesWith(marker, 'sleep').length > 0, 5000)).toBe(true);
    controller.abort();
    expect(await output).toEqual({
      content: expect.stringMatching(
        /^before\nCommand was cancelled after \d+ ms and was killed\.(\n\(Ran UNSANDBOXED.*)?$/,
      ),
      isError: true,
    });
  });

  test('heartbeats while a command runs', async () => {
    const beats: unknown[] = [];
    const result = await run({ command: 'sleep 0.5; echo done' }, { heartbeat: (d: unknown) => beats.push(d) });
    expect(result.content).toBe(said('done\nExit code: 0'));
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toMatchObject({ tool: 'bash' });
  });

  test('a background process holding the output pipe does not block the result', async () => {
    const marker = uniqueSleep(5);
    const started = Date.now();
    const result = await run({ command: `(sleep ${marker}; echo late) & echo early` });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.content).toBe(said('early\nExit code: 0'));
    // Sandboxed, it ended with its shell; unsandboxed, it runs on until the worker stops it.
    if (mode === 'bwrap') expect(liveProcessesWith(marker)).toEqual([]);
    else expect(processRegistry.size).toBeGreaterThan(0);
    await processRegistry.stopAll();
    expect(await waitUntil(() => liveProcessesWith(marker).length === 0, 3000)).toBe(true);
  });

  test('the timeout note survives output that fills the limit', async () => {
    const result = await run({ command: 'yes 0123456789 | head -c 200000; sleep 30', timeout: 1000 });
    expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    expect(result.content).toMatch(/\[… output truncated: \d+ of 200000 characters omitted\./);
    expect(result.content.endsWith(said('Command timed out after 1000 ms and was killed.'))).toBe(true);
  });

  test('a command the policy refuses is not run and the result names the rule', async () => {
    const result = await run({ command: 'touch ran.txt; sudo id' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Error: command refused by the command policy, rule 'privilege-escalation': 'sudo'/,
    );
    expect(existsSync(path.join(dir, 'ran.txt'))).toBe(false);
  });

  test('timeout above the maximum is refused by the schema', async () => {
    const result = await run({ command: 'true', timeout: 600_001 });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- timeout: Too big: expected number to be <=600000');
  });

  test('a missing workspace is a clear error', async () => {
    const result = await registry.run('bash', { command: 'true' }, makeContext(path.join(dir, 'does-not-exist')));
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Error: The workspace directory .*does-not-exist does not exist\.$/);
  });
});
