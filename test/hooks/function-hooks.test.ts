import type { FunctionHooks, HookEventPayload } from '../../src/hooks';
import { group, makeHookBench, printsJson, type HookBench } from './helpers';

// Hooks a custom worker registers as functions, and the canExecuteTool permission check.
describe('function hooks and canExecuteTool', () => {
  let bench: HookBench;
  beforeEach(() => {
    bench = makeHookBench();
  });
  afterEach(() => bench.cleanup());

  const call = { event: 'PreToolUse' as const, toolName: 'write_file', toolInput: { path: 'a.txt', content: 'x' } };

  test('a function hook gets the event and can deny; matchers apply', async () => {
    const seen: HookEventPayload[] = [];
    const hooks: FunctionHooks = {
      PreToolUse: [
        { matcher: 'bash', run: () => ({ hookSpecificOutput: { permissionDecision: 'deny' } }) },
        {
          matcher: '.*_file',
          run: (event) => {
            seen.push(event);
            return { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'read-only day' } };
          },
        },
      ],
    };
    expect(await bench.run(call, { hooks })).toEqual({ decision: 'deny', reason: 'read-only day', reports: [] });
    expect(seen).toEqual([
      {
        session_id: 'wf-test',
        hook_event_name: 'PreToolUse',
        cwd: bench.ws,
        tool_name: 'write_file',
        tool_input: { path: 'a.txt', content: 'x' },
      },
    ]);
    expect(await bench.events({ hooks })).toEqual({ events: ['PreToolUse'], reports: [] });
  });

  test('canExecuteTool rewrites the input; it sees what the settings hooks rewrote', async () => {
    const rewrite = {
      hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { path: 'b.txt', content: 'x' } },
    };
    bench.workerHooks({ PreToolUse: [group('write_file', bench.script('rw.sh', printsJson(rewrite)))] });
    const checked: unknown[] = [];
    const hooks: FunctionHooks = {
      canExecuteTool: (toolName, input) => {
        checked.push([toolName, input]);
        return { behavior: 'allow', updatedInput: { ...(input as object), content: 'X' } };
      },
    };
    expect(await bench.run(call, { hooks })).toEqual({
      decision: 'allow',
      updatedInput: { path: 'b.txt', content: 'X' },
      reports: [],
    });
    expect(checked).toEqual([['write_file', { path: 'b.txt', content: 'x' }]]);
  });

  test('canExecuteTool deny gives its message; it is not asked when a hook denied already', async () => {
    let asked = 0;
    const hooks: FunctionHooks = {
      canExecuteTool: () => {
        asked++;
        return { behavior: 'deny', message: 'not in this repo' };
      },
    };
    expect(await bench.run(call, { hooks })).toEqual({ decision: 'deny', reason: 'not in this repo', reports: [] });
    bench.workerHooks({ PreToolUse: [group('*', bench.script('no.sh', 'echo stop >&2; exit 2'))] });
    expect(await bench.run(call, { hooks })).toEqual({ decision: 'deny', reason: 'stop', reports: [] });
    expect(asked).toBe(1);
  });

  test('a throwing or hanging function hook fails closed for PreToolUse, and is only reported for Stop', async () => {
    const hooks: FunctionHooks = {
      PreToolUse: [
        {
          timeout: 0.2,
          run: (_e, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(undefined))),
        },
      ],
      Stop: [
        {
          run: () => {
            throw new Error('db down');
          },
        },
      ],
    };
    const pre = await bench.run(call, { hooks });
    expect(pre.decision).toBe('deny');
    expect(pre.reason).toContain('#1 (function) failed: it timed out after 0.2 s');
    const stop = await bench.run({ event: 'Stop' }, { hooks });
    expect(stop).toEqual({
      decision: 'none',
      reports: ['Stop hook #1 (function) failed: it threw: db down (ignored: not blocking for Stop)'],
    });
  });

  test('canExecuteTool returning nonsense denies the call', async () => {
    const hooks = { canExecuteTool: () => ({ behavior: 'sure' }) } as unknown as FunctionHooks;
    const outcome = await bench.run(call, { hooks });
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain(
      "canExecuteTool failed: it returned neither {behavior: 'allow'} nor {behavior: 'deny'}",
    );
  });

  test('a rewritten input too large for history denies the call', async () => {
    const hooks: FunctionHooks = {
      canExecuteTool: () => ({ behavior: 'allow', updatedInput: { content: 'x'.repeat(300 * 1024) } }),
    };
    const outcome = await bench.run(call, { hooks });
    expect(outcome.decision).toBe('deny');
    expect(outcome.reason).toContain('the rewritten tool input is over 262144 bytes');
  });
});

describe('the docs/hooks.md example', () => {
  // Kept in step with docs/hooks.md ("Hooks in code"): it must compile and do what the text says.
  const hooks: FunctionHooks = {
    PreToolUse: [
      {
        matcher: 'bash',
        timeout: 10,
        run: async (event) =>
          String((event.tool_input as { command?: string }).command).includes('git push')
            ? { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no pushing' } }
            : undefined,
      },
    ],
    Stop: [
      { run: async (event) => (event.stop_hook_active ? undefined : { decision: 'block', reason: 'summarise first' }) },
    ],
    canExecuteTool: async (toolName, input) =>
      toolName === 'write_file'
        ? {
            behavior: 'allow',
            updatedInput: { ...(input as object), path: `sandbox/${(input as { path: string }).path}` },
          }
        : { behavior: 'allow' },
  };
  let bench: HookBench;
  beforeEach(() => {
    bench = makeHookBench();
  });
  afterEach(() => bench.cleanup());

  test('denies git push, rewrites write_file paths, blocks the first stop only', async () => {
    const push = await bench.run(
      { event: 'PreToolUse', toolName: 'bash', toolInput: { command: 'git push origin' } },
      { hooks },
    );
    expect(push).toEqual({ decision: 'deny', reason: 'no pushing', reports: [] });
    const write = await bench.run(
      { event: 'PreToolUse', toolName: 'write_file', toolInput: { path: 'a.txt', content: '' } },
      { hooks },
    );
    expect(write.updatedInput).toEqual({ path: 'sandbox/a.txt', content: '' });
    expect((await bench.run({ event: 'Stop' }, { hooks })).block).toBe(true);
    expect((await bench.run({ event: 'Stop', stopHookActive: true }, { hooks })).block).toBeUndefined();
  });
});
