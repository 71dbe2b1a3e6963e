import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { makeContext, makeTempDir } from './helpers';

/**
 * True while any process of the group is still running. Zombies do not count: they are dead, merely
 * not yet reaped by PID 1 (which in containers may reap only every few seconds).
 */
function groupAlive(pgid: number): boolean {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the parenthesised command name: state, ppid, pgrp, …
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return predicate();
}

describe('bash tool', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = new ToolRegistry([createBashTool({ heartbeatIntervalMs: 100 })]);
  const run = (input: unknown, overrides = {}) => registry.run('bash', input, makeContext(dir, overrides));

  test('runs in the workspace and shows the exit code', async () => {
    const result = await run({ command: 'pwd' });
    expect(result).toEqual({ content: `${dir}\nExit code: 0`, isError: false });
  });

  test('a non-zero exit is an error result with the exit code', async () => {
    const result = await run({ command: 'echo failing; exit 3' });
    expect(result).toEqual({ content: 'failing\nExit code: 3', isError: true });
  });

  test('no output says so', async () => {
    await expect(run({ command: 'true' })).resolves.toEqual({ content: '(no output)\nExit code: 0', isError: false });
  });

  test('stdout and stderr are combined in arrival order', async () => {
    const result = await run({ command: 'echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three' });
    expect(result.content).toBe('one\ntwo\nthree\nExit code: 0');
  });

  test('stdin is /dev/null, so reading it ends at once', async () => {
    const result = await run({ command: 'cat; echo "read done"', timeout: 5000 });
    expect(result).toEqual({ content: 'read done\nExit code: 0', isError: false });
  });

  test('the Anthropic API key of the worker is not visible to commands', async () => {
    process.env.ANTHROPIC_API_KEY = 'sk-test-secret';
    try {
      const result = await run({ command: 'echo "key=${ANTHROPIC_API_KEY:-unset}"' });
      expect(result.content).toBe('key=unset\nExit code: 0');
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
    expect(result.content).toBe('é\nExit code: 0');
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
    expect(result.content.endsWith('line-09999\nExit code: 0')).toBe(true);
    // Kept + omitted accounts for every character of the output.
    const [head, tail] = result.content.replace(/\nExit code: 0$/, '\n').split(note?.[0] ?? '');
    expect((head ?? '').length - 2 + (tail ?? '').length - 2 + Number(note?.[1])).toBe(110_000);
    expect(result.content).not.toContain('[Output truncated'); // the registry cap did not cut the exit code
  });

  test('a timeout kills the command and says so', async () => {
    const started = Date.now();
    const result = await run({ command: 'echo started; sleep 30', timeout: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(result.content).toBe('started\nCommand timed out after 300 ms and was killed.');
  });

  test('a timeout kills background children too (the whole process group)', async () => {
    const pidFile = path.join(dir, 'timeout-pgid');
    const result = await run({ command: `echo $$ > ${pidFile}; sleep 30 & sleep 30; wait`, timeout: 300 });
    expect(result.content).toContain('Command timed out after 300 ms');
    const pgid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(await waitUntil(() => !groupAlive(pgid), 3000)).toBe(true);
  });

  test('a command that ignores SIGTERM is killed with SIGKILL', async () => {
    const pidFile = path.join(dir, 'stubborn-pgid');
    const started = Date.now();
    const result = await run({
      command: `trap '' TERM; echo $$ > ${pidFile}; sleep 30 & sleep 30; wait`,
      timeout: 300,
    });
    expect(result.content).toContain('Command timed out after 300 ms');
    expect(Date.now() - started).toBeLessThan(5000);
    const pgid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(await waitUntil(() => !groupAlive(pgid), 3000)).toBe(true);
  });

  test('cancellation via the abort signal returns quickly and kills the process group', async () => {
    const pidFile = path.join(dir, 'cancel-pgid');
    const controller = new AbortController();
    const started = Date.now();
    const pending = run({ command: `echo $$ > ${pidFile}; sleep 30 & sleep 30; wait` }, { signal: controller.signal });
    // Wait until the shell has started its children before cancelling.
    expect(await waitUntil(() => readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }).trim() !== '', 5000)).toBe(
      true,
    );
    const pgid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(groupAlive(pgid)).toBe(true);
    controller.abort();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/cancelled/);
    expect(await waitUntil(() => !groupAlive(pgid), 3000)).toBe(true);
  });

  test('the bash tool itself reports a cancellation when used without the registry', async () => {
    const tool = createBashTool();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const output = await tool.execute(
      { command: 'echo before; sleep 30' },
      makeContext(dir, { signal: controller.signal }),
    );
    expect(output).toEqual({
      content: expect.stringMatching(/^before\nCommand was cancelled after \d+ ms and was killed\.$/),
      isError: true,
    });
  });

  test('heartbeats while a command runs', async () => {
    const beats: unknown[] = [];
    const result = await run({ command: 'sleep 0.5; echo done' }, { heartbeat: (d: unknown) => beats.push(d) });
    expect(result.content).toBe('done\nExit code: 0');
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toMatchObject({ tool: 'bash' });
  });

  test('a background process holding the output pipe does not block the result', async () => {
    const pidFile = path.join(dir, 'bg-pgid');
    const started = Date.now();
    const result = await run({ command: `echo $$ > ${pidFile}; (sleep 5; echo late) & echo early` });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(result.content).toBe('early\nExit code: 0');
    const pgid = Number(readFileSync(pidFile, 'utf8').trim());
    process.kill(-pgid, 'SIGKILL'); // clean up the sleeper this test left behind on purpose
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
