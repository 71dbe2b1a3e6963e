import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import * as ts from 'typescript';

/**
 * The workflow context's own stack formatter (src/workflows/promise-stacks.ts), run as the SDK runs
 * a preloaded module: its compiled code evaluated in a fresh V8 context, as one script named like a
 * bundle. An error built with the context's `Error` by code outside it (what the SDK's promise hook
 * does) gets an empty stack; errors of the context's own code, builtins included, keep theirs; a
 * context whose `Error` is already frozen is left alone without an exception.
 */
const BUNDLE = '/srv/worker/workflow-bundle.js';

async function moduleCode(): Promise<string> {
  const source = await fs.readFile(path.join(__dirname, '../../src/workflows/promise-stacks.ts'), 'utf8');
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
