import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createHookActivities } from '../../src/activities/hooks';
import { MAX_HOOK_OUTPUT_BYTES } from '../../src/hooks';
import type { HookOutcome } from '../../src/shared/hooks-io';
import { group, makeHookBench, printsJson, type HookBench } from './helpers';

// Command hooks from the worker-wide settings file, run for real: scripts written here, read their
// event on stdin, answer by exit code and stdout JSON as Claude Code's hooks do.
describe('command hooks (worker settings)', () => {
  let bench: HookBench;
  beforeEach(() => {
    bench = makeHookBench();
  });
  afterEach(() => bench.cleanup());

  const bashCall = { event: 'PreToolUse' as const, toolName: 'bash', toolInput: { command: 'ls' }, toolUseId: 'tu1' };

  test('the event reaches the hook as JSON on stdin, with the workspace as cwd and no provider keys', async () => {
    const log = path.join(bench.outside, 'event.json');
    const hook = bench.script(
      'record.sh',
      `cat > ${log}\necho "$PWD|$ANTHROPIC_API_KEY|$CLAUDE_PROJECT_DIR" > ${log}.env`,
    );
    bench.workerHooks({ PreToolUse: [group('bash', hook)] });
    process.env.ANTHROPIC_API_KEY = 'sk-test-secret';
    try {
      expect(await bench.run(bashCall)).toEqual({ decision: 'none', reports: [] });
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
    expect(JSON.parse(readFileSync(log, 'utf8'))).toEqual({
      session_id: 'wf-test',
      hook_event_name: 'PreToolUse',
      cwd: bench.ws,
      tool_name: 'bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'tu1',
    });
    expect(readFileSync(`${log}.env`, 'utf8')).toBe(`${bench.ws}||${bench.ws}\n`);
  });

  test('PreToolUse exit code 2 denies with stderr as the reason', async () => {
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('no.sh', 'echo "no ls here" >&2\nexit 2'))] });
    expect(await bench.run(bashCall)).toEqual({ decision: 'deny', reason: 'no ls here', reports: [] });
  });

  test.each([
    ['allow', { decision: 'allow', reason: 'fine', reports: [] }],
    ['ask', { decision: 'ask', reason: 'fine', reports: [] }],
    ['deny', { decision: 'deny', reason: 'fine', reports: [] }],
  ])('PreToolUse JSON permissionDecision %s', async (decision, expected) => {
    const out = {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: decision,
        permissionDecisionReason: 'fine',
      },
    };
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('j.sh', printsJson(out)))] });
    expect(await bench.run(bashCall)).toEqual(expected);
  });

  test('updatedInput rewrites the input, and additionalContext is passed on', async () => {
    const out = {
      hookSpecificOutput: {
        permissionDecision: 'allow',
        updatedInput: { command: 'ls -la' },
        additionalContext: 'listing is cheap',
      },
    };
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('rw.sh', printsJson(out)))] });
    expect(await bench.run(bashCall)).toEqual({
      decision: 'allow',
      updatedInput: { command: 'ls -la' },
      additionalContext: 'listing is cheap',
      reports: [],
    });
  });

  test('any deny wins over an allow; contexts are concatenated in order', async () => {
    const allow = printsJson({ hookSpecificOutput: { permissionDecision: 'allow', additionalContext: 'one' } });
    const deny = printsJson({
      hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'nope', additionalContext: 'two' },
    });
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('a.sh', allow), bench.script('d.sh', deny))] });
    expect(await bench.run(bashCall)).toEqual({
      decision: 'deny',
      reason: 'nope',
      additionalContext: 'one\n\ntwo',
      reports: [],
    });
  });

  test('a PreToolUse hook that fails (exit 1) denies the call and is reported', async () => {
    bench.workerHooks({ PreToolUse: [group('*', bench.script('crash.sh', 'echo boom >&2\nexit 1'))] });
    const outcome = await bench.run(bashCall);
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toMatch(
      /^PreToolUse hook '.*crash\.sh' \(worker settings\) failed: exit code 1: boom\. The call is denied/,
    );
    expect(outcome.reports).toEqual([expect.stringContaining('exit code 1: boom')]);
  });

  test('a PreToolUse hook printing bad JSON denies the call', async () => {
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('bad.sh', 'echo "{not json"'))] });
    const outcome = await bench.run(bashCall);
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain('its stdout is not valid JSON');
  });

  test('a PreToolUse hook answering an unknown permissionDecision denies the call', async () => {
    const out = { hookSpecificOutput: { permissionDecision: 'maybe' } };
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('odd.sh', printsJson(out)))] });
    const outcome = await bench.run(bashCall);
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain(
      "does not have Claude Code's hook output shape (hookSpecificOutput.permissionDecision",
    );
  });

  test('a PreToolUse hook that times out is killed and the call denied', async () => {
    const pidFile = path.join(bench.outside, 'pid');
    const slow = bench.script('slow.sh', `echo $$ > ${pidFile}\nsleep 30`);
    bench.workerHooks({ PreToolUse: [group('bash', { command: slow, timeout: 0.5 })] });
    const started = Date.now();
    const outcome = await bench.run(bashCall);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain('timed out after 0.5 s and was killed');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  test('a hook that cannot start (the workspace is gone) denies the call', async () => {
    bench.workerHooks({ PreToolUse: [group('bash', 'true')] });
    const outcome = await bench.run({ ...bashCall, workspace: path.join(bench.ws, 'gone') });
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toMatch(/failed: it could not be started: .*ENOENT/);
  });

  test('a hook flooding stdout is killed at the output cap and fails', async () => {
    bench.workerHooks({ PreToolUse: [group('bash', 'cat > /dev/null; yes flood')] });
    const outcome = await bench.run(bashCall);
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain(`printed more than ${MAX_HOOK_OUTPUT_BYTES} bytes on stdout and was killed`);
    expect(JSON.stringify(outcome).length).toBeLessThan(20_000);
  });

  test('PostToolUse receives the result; exit 2 blocks with stderr, a failure is only reported', async () => {
    const log = path.join(bench.outside, 'post.json');
    bench.workerHooks({
      PostToolUse: [group('bash', bench.script('post.sh', `cat > ${log}\necho "lint failed" >&2\nexit 2`))],
      PostToolUseFailure: [group('bash', bench.script('fail.sh', 'exit 3'))],
    });
    const post = await bench.run({
      ...bashCall,
      event: 'PostToolUse',
      toolResult: { content: 'a\nb', isError: false },
    });
    expect(post).toEqual({ decision: 'none', block: true, reason: 'lint failed', reports: [] });
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({
      hook_event_name: 'PostToolUse',
      tool_response: { content: 'a\nb', is_error: false },
    });
    const failure = await bench.run({
      ...bashCall,
      event: 'PostToolUseFailure',
      toolResult: { content: 'Exit code: 1', isError: true },
    });
    expect(failure.decision).toBe('none');
    expect(failure.block).toBeUndefined();
    expect(failure.reports).toEqual([
      expect.stringMatching(/exit code 3 \(ignored: not blocking for PostToolUseFailure\)$/),
    ]);
  });

  test('PostToolUse JSON decision block and PostToolUseFailure additionalContext', async () => {
    bench.workerHooks({
      PostToolUse: [group('*', bench.script('b.sh', printsJson({ decision: 'block', reason: 'format it' })))],
      PostToolUseFailure: [
        group('*', bench.script('c.sh', printsJson({ hookSpecificOutput: { additionalContext: 'try --verbose' } }))),
      ],
    });
    const result = { content: 'x', isError: false };
    expect(await bench.run({ ...bashCall, event: 'PostToolUse', toolResult: result })).toEqual({
      decision: 'none',
      block: true,
      reason: 'format it',
      reports: [],
    });
    const failure = await bench.run({
      ...bashCall,
      event: 'PostToolUseFailure',
      toolResult: { content: 'e', isError: true },
    });
    expect(failure).toEqual({ decision: 'none', additionalContext: 'try --verbose', reports: [] });
  });

  test('UserPromptSubmit: plain stdout is context, exit 2 blocks, the prompt is on stdin', async () => {
    bench.workerHooks({ UserPromptSubmit: [group(undefined, bench.script('ctx.sh', 'grep -o \'"prompt":"[^"]*"\''))] });
    expect(await bench.run({ event: 'UserPromptSubmit', prompt: 'fix the bug' })).toEqual({
      decision: 'none',
      additionalContext: '"prompt":"fix the bug"',
      reports: [],
    });
    bench.workerHooks({
      UserPromptSubmit: [group(undefined, bench.script('no.sh', 'echo "no secrets in prompts" >&2; exit 2'))],
    });
    expect(await bench.run({ event: 'UserPromptSubmit', prompt: 'x' })).toEqual({
      decision: 'none',
      block: true,
      reason: 'no secrets in prompts',
      reports: [],
    });
  });

  test('Stop: decision block keeps the run going with the reason; stop_hook_active is passed', async () => {
    const hook = bench.script(
      'stop.sh',
      `if grep -q '"stop_hook_active":true'; then exit 0; fi\n${printsJson({ decision: 'block', reason: 'run the tests first' }).replace('cat > /dev/null\n', '')}`,
    );
    bench.workerHooks({ Stop: [group(undefined, hook)] });
    expect(await bench.run({ event: 'Stop' })).toEqual({
      decision: 'none',
      block: true,
      reason: 'run the tests first',
      reports: [],
    });
    expect(await bench.run({ event: 'Stop', stopHookActive: true })).toEqual({ decision: 'none', reports: [] });
  });

  test('continue:false asks to end the run; systemMessage is reported', async () => {
    const out = { continue: false, stopReason: 'budget exhausted', systemMessage: 'stopping' };
    bench.workerHooks({ PostToolUse: [group('*', bench.script('halt.sh', printsJson(out)))] });
    const outcome = await bench.run({ ...bashCall, event: 'PostToolUse', toolResult: { content: '', isError: false } });
    expect(outcome.stopRun).toBe('budget exhausted');
    expect(outcome.reports).toEqual([expect.stringContaining(': stopping')]);
  });

  test('cancelling the activity kills the hook and PreToolUse fails closed', async () => {
    const pidFile = path.join(bench.outside, 'pid');
    bench.workerHooks({ PreToolUse: [group('bash', bench.script('hang.sh', `echo $$ > ${pidFile}\nsleep 60`))] });
    const env = new MockActivityEnvironment();
    const running: Promise<HookOutcome> = env.run(
      createHookActivities({ settingsFile: bench.workerSettings }).runHook,
      {
        runId: 'wf',
        workspace: bench.ws,
        ...bashCall,
      },
    );
    for (let i = 0; i < 100 && !existsNonEmpty(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    env.cancel();
    const outcome = await running;
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain('the run was cancelled');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

function existsNonEmpty(file: string): boolean {
  try {
    return readFileSync(file, 'utf8').trim() !== '';
  } catch {
    return false;
  }
}
