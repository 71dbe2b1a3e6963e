import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { compileMatcher, MAX_HOOKS_PER_EVENT, parseSettings, workerSettingsPath } from '../../src/hooks';
import { group, makeHookBench, type HookBench } from './helpers';

describe('matchers', () => {
  test.each([
    [undefined, 'bash', true],
    ['', 'anything', true],
    ['*', 'read_file', true],
    ['bash', 'bash', true],
    ['bash', 'bash2', false],
    ['bash', 'Bash', false],
    ['bash|write_file', 'write_file', true],
    ['bash|write_file', 'read_file', false],
    ['.*_file', 'edit_file', true],
    ['.*_file', 'grep', false],
    ['^mcp__', 'mcp__x__y', true],
    ['^(read|write)_file$', 'read_file_x', false],
  ])('matcher %p on %p → %p', (matcher, tool, expected) => {
    expect(compileMatcher(matcher)(tool)).toBe(expected);
  });

  test('a regex RE2 cannot run is refused with its name (no catastrophic backtracking possible)', () => {
    expect(() => compileMatcher('(?=x)bash')).toThrow(
      /matcher '\(\?=x\)bash' is not a valid regular expression \(RE2 syntax\)/,
    );
    // Exponential for a backtracking engine, linear for RE2.
    const started = Date.now();
    expect(compileMatcher('^(a+)+$')('a'.repeat(50_000) + 'b')).toBe(false);
    expect(Date.now() - started).toBeLessThan(10_000); // backtracking would never end
  });
});

describe('settings files', () => {
  let bench: HookBench;
  beforeEach(() => {
    bench = makeHookBench();
  });
  afterEach(() => bench.cleanup());

  test('the worker file is DURABLE_AGENT_SETTINGS, else ~/.durable-agent/settings.json', () => {
    expect(workerSettingsPath({ DURABLE_AGENT_SETTINGS: '/etc/da/hooks.json' })).toBe('/etc/da/hooks.json');
    expect(workerSettingsPath({})).toMatch(/\/\.durable-agent\/settings\.json$/);
  });

  test('hookEvents lists the events that have hooks, from both files', async () => {
    expect(await bench.events()).toEqual({ events: [], reports: [] });
    bench.workerHooks({ Stop: [group(undefined, 'true')] });
    bench.workspaceHooks({ PostToolUse: [group('bash', 'true')] });
    expect(await bench.events()).toEqual({ events: ['PostToolUse', 'Stop'], reports: [] });
  });

  test.each([
    ['{ "hooks": ', /is not valid JSON/],
    [
      '{"hooks": {"PreToolUse": [{"matcher": "bash", "hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}}',
      /PreToolUse\.0\.hooks\.0\.timeout/,
    ],
    ['{"hooks": {"PreToolUse": {"matcher": "bash"}}}', /hooks\.PreToolUse: Invalid input: expected array/],
    [
      '{"hooks": {"PreToolUse": [{"matcher": "(?<!x)", "hooks": []}]}}',
      /PreToolUse: matcher .* is not a valid regular expression/,
    ],
  ])('a bad worker file %#: reported at run start, and PreToolUse denies every call', async (text, why) => {
    bench.workerHooks(text);
    const plan = await bench.events();
    expect(plan.events).toEqual(['PreToolUse']);
    expect(plan.reports).toEqual([expect.stringMatching(why)]);
    expect(plan.reports[0]).toContain('every tool call is denied until it is fixed');
    const outcome = await bench.run({ event: 'PreToolUse', toolName: 'read_file', toolInput: {} });
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toMatch(why);
    // Other events go on (only reported).
    const stop = await bench.run({ event: 'Stop' });
    expect(stop.decision).toBe('none');
    expect(stop.block).toBeUndefined();
    expect(stop.reports.join('\n')).toMatch(why);
  });

  test('unknown events and hook types are reported; an unsupported PreToolUse hook fails closed', async () => {
    bench.workerHooks({
      SessionStart: [group(undefined, 'true')],
      PreToolUse: [{ matcher: 'bash', hooks: [{ type: 'prompt', prompt: 'is this safe?' }] }],
    } as never);
    const plan = await bench.events();
    expect(plan.events).toEqual(['PreToolUse']);
    expect(plan.reports).toEqual([expect.stringContaining("'SessionStart' hooks are ignored")]);
    const outcome = await bench.run({ event: 'PreToolUse', toolName: 'bash', toolInput: { command: 'ls' } });
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain("hooks of type 'prompt' cannot be run");
  });

  test('matchers naming no tool of the worker are reported (Claude Code spells bash Bash)', async () => {
    bench.workerHooks({ PreToolUse: [group('Bash|bash', 'true')] });
    const plan = await bench.events({ toolNames: ['bash', 'read_file'] });
    expect(plan.reports).toEqual([expect.stringContaining("matcher 'Bash|bash' names no tool of this worker (Bash)")]);
  });

  test('more hooks than the cap make the file invalid', () => {
    const many = Array.from({ length: MAX_HOOKS_PER_EVENT + 1 }, (_, i) => group('*', `echo ${i}`));
    const loaded = parseSettings(JSON.stringify({ hooks: { Stop: many } }), 'worker', 'w.json');
    expect(loaded.invalid).toMatch(/Too big|at most/);
  });

  test('identical commands of one event run once', async () => {
    const log = path.join(bench.outside, 'count');
    bench.workerHooks({ Stop: [group(undefined, `echo x >> ${log}`), group(undefined, `echo x >> ${log}`)] });
    await bench.run({ event: 'Stop' });
    expect(execFileSync('wc', ['-l', log], { encoding: 'utf8' }).trim()).toBe(`1 ${log}`);
  });

  test('a worker settings path under a regular file is reported; a dangling link there means no file', async () => {
    const plainFile = path.join(bench.outside, 'plain');
    writeFileSync(plainFile, 'not a folder');
    const under = path.join(plainFile, 'settings.json');
    const plan = await bench.events({ settingsFile: under });
    // Unreadable settings fail closed, as any unreadable settings file does: tool calls are refused.
    expect(plan.events).toEqual(['PreToolUse']);
    expect(plan.reports.join('\n')).toMatch(/settings\.json cannot be read: .*ENOTDIR/);

    const dangling = path.join(bench.outside, 'dangling.json');
    symlinkSync(path.join(bench.outside, 'nowhere.json'), dangling);
    expect(await bench.events({ settingsFile: dangling })).toEqual({ events: [], reports: [] });
  });

  test('a workspace settings file that is a link out of the workspace, a FIFO or huge is refused, not read', async () => {
    const secret = path.join(bench.outside, 'settings.json');
    writeFileSync(secret, JSON.stringify({ hooks: { Stop: [group(undefined, 'true')] } }));
    mkdirSync(path.join(bench.ws, '.durable-agent'));
    const file = path.join(bench.ws, '.durable-agent', 'settings.json');
    symlinkSync(secret, file);
    let plan = await bench.events();
    expect(plan.events).toEqual(['PreToolUse']);
    expect(plan.reports[0]).toContain('outside the workspace');

    execFileSync('rm', [file]);
    execFileSync('mkfifo', [file]);
    const started = Date.now();
    plan = await bench.events();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(plan.reports[0]).toContain('cannot be read');

    execFileSync('rm', [file]);
    execFileSync('truncate', ['-s', '2M', file]);
    plan = await bench.events();
    expect(plan.reports[0]).toContain('is over 1048576 bytes');
  });
});
