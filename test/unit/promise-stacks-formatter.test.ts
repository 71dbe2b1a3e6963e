import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as ts from 'typescript';

/**
 * The workflow context's own stack formatter (src/workflows/sdk/promise-stacks.ts), run as the SDK runs
 * a preloaded module: its compiled code evaluated in a fresh V8 context, as one script named like a
 * bundle. An error built with the context's `Error` by code outside it (what the SDK's promise hook
 * does) gets an empty stack; errors of the context's own code, builtins included, keep theirs; a
 * context whose `Error` is already frozen is left alone without an exception.
 */
const BUNDLE = '/srv/worker/workflow-bundle.js';

async function moduleCode(): Promise<string> {
  const source = await fs.readFile(path.join(__dirname, '../../src/workflows/sdk/promise-stacks.ts'), 'utf8');
  return ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

/** A context with the module evaluated in it (after `before`, when given), and what it reported. */
async function contextWithModule(before = ''): Promise<{ context: vm.Context; installed: unknown }> {
  const context = vm.createContext({});
  const code =
    `${before}\nconst exports = {};\n${await moduleCode()}\n` +
    `globalThis.installedAgain = (() => { try { return exports.formatOwnStacks(); } catch (e) { return 'threw: ' + e.message; } })();\n` +
    // Workflow code of the "bundle": a plain throw, and a builtin's error.
    `globalThis.ownError = function ownError() { return new Error('own'); };\n` +
    `globalThis.builtinError = function builtinError() { try { JSON.parse('{'); } catch (e) { return e; } };\n`;
  new vm.Script(code, { filename: BUNDLE }).runInContext(context);
  return { context, installed: context.installedAgain };
}

test("an error the context's own code builds keeps its stack, in the default format", async () => {
  const { context } = await contextWithModule();
  const own = (context.ownError as () => Error)();
  expect(own.stack).toMatch(/^Error: own\n {4}at (?:Object\.)?ownError \(\/srv\/worker\/workflow-bundle\.js:\d+:\d+\)/);
  const builtin = (context.builtinError as () => Error)();
  expect(builtin.stack).toMatch(
    /^SyntaxError: .*JSON.*\n {4}at JSON\.parse \(<anonymous>\)\n {4}at (?:Object\.)?builtinError \(\/srv\/worker\/workflow-bundle\.js:/,
  );
});

test("an error built with the context's Error from outside it (the SDK's promise hook) gets an empty stack", async () => {
  const { context } = await contextWithModule();
  const ContextError = vm.runInContext('Error', context) as ErrorConstructor;
  // As the hook does: `new ErrorCtor().stack`, from a function of the outer realm.
  function init(): string | undefined {
    return new ContextError().stack;
  }
  expect(init()).toBe('');
});

test('a context whose Error is already frozen is left alone, and the module does not throw', async () => {
  const { context, installed } = await contextWithModule('Object.freeze(Error);');
  expect(installed).toBe(false);
  expect(vm.runInContext('Error.prepareStackTrace', context)).toBeUndefined();
  const own = (context.ownError as () => Error)();
  expect(own.stack).toMatch(/ownError \(\/srv\/worker\/workflow-bundle\.js:/);
});

test('an error whose toString throws is still formatted', async () => {
  const { context } = await contextWithModule();
  const stack = vm.runInContext(
    `(() => { const e = new Error('x'); Object.defineProperty(e, 'name', { get() { throw new Error('no'); } }); return e.stack; })()`,
    context,
  ) as string;
  expect(stack).toMatch(/^Error\n {4}at /);
});

/**
 * The lookups the SDK's promise hook makes for every promise (node_modules/@temporalio/worker,
 * `getActivator` and its `init` hook), written as it writes them, from the outer realm.
 */
function hookLookups(context: vm.Context) {
  const promise = vm.runInContext('Promise.resolve()', context) as Promise<void>;
  const fn = (promise.constructor as unknown as { constructor: (...source: string[]) => () => unknown }).constructor;
  return {
    activator: () => fn('return globalThis.__TEMPORAL_ACTIVATOR__')(),
    errorStack: () => new (fn('return globalThis.Error')() as ErrorConstructor)().stack,
    fn,
  };
}

test('the SDK compiles exactly the two sources the module answers (else the shortcut no longer applies)', async () => {
  const sdk = await fs.readFile(require.resolve('@temporalio/worker/lib/workflow/vm-shared.js'), 'utf8');
  expect(sdk).toContain("ctor('return globalThis.__TEMPORAL_ACTIVATOR__')()");
  expect(sdk).toContain("fn('return globalThis.Error')()");
  expect(sdk).toContain('promise.constructor.constructor');
});

test("the hook's lookups answer without compiling: the current run's activator, and an Error with no stack", async () => {
  const { context } = await contextWithModule();
  const hook = hookLookups(context);
  expect(hook.activator()).toBeUndefined();
  // The reusable context swaps the run's globals in and out: the lookup reads the one there now.
  const first = { info: { runId: 'run-1' } };
  context.__TEMPORAL_ACTIVATOR__ = first;
  expect(hook.activator()).toBe(first);
  const second = { info: { runId: 'run-2' } };
  context.__TEMPORAL_ACTIVATOR__ = second;
  expect(hook.activator()).toBe(second);
  expect(hook.errorStack()).toBe('');
  // Not compiled: the same function every time, and no Error of the context's (which would capture frames).
  const lookup = 'return globalThis.__TEMPORAL_ACTIVATOR__';
  expect(hook.fn(lookup)).toBe(hook.fn(lookup));
  expect(hook.fn('return globalThis.Error')()).not.toBe(vm.runInContext('Error', context));
  // Any other source is compiled by the context's own Function, as before.
  expect(hook.fn('a', 'b', 'return a + b')).toBeInstanceOf(vm.runInContext('Function', context) as FunctionConstructor);
  expect((hook.fn('a', 'b', 'return a + b') as unknown as (a: number, b: number) => number)(2, 3)).toBe(5);
  expect(hook.fn('return globalThis.Error.name')()).toBe('Error');
  // The context's own code still sees a Function behind Promise, for what it compiles.
  expect(vm.runInContext(`Promise.constructor('return 40 + 2')()`, context)).toBe(42);
});

test('without its own stack formatter (a frozen Error), the context keeps the real Error for the hook', async () => {
  const { context } = await contextWithModule('Object.freeze(Error);');
  const hook = hookLookups(context);
  // A real stack (formatted by the outer realm's formatter, as an unmodified context's would be).
  expect(hook.errorStack()).toMatch(/^Error[^]*\bat /);
  context.__TEMPORAL_ACTIVATOR__ = 'a';
  expect(hook.activator()).toBe('a');
});

test('a context whose Promise is already frozen is left alone', async () => {
  const { context } = await contextWithModule('Object.freeze(Promise);');
  const hook = hookLookups(context);
  expect(hook.fn).toBe(vm.runInContext('Function', context));
  const lookup = 'return globalThis.__TEMPORAL_ACTIVATOR__';
  expect(hook.fn(lookup)).not.toBe(hook.fn(lookup));
  expect(hook.errorStack()).toBe('');
});
