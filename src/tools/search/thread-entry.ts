import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * How a search thread is started. From compiled JavaScript (`npm run build`, the CLI) it runs
 * `thread.js` beside this file. From TypeScript source (jest, benchmarks and tools run with a
 * require hook) the thread cannot load `.ts` files itself, and a native compiler must not be loaded
 * in it (@swc/core crashes the process when a thread that loaded it is terminated, which is how a
 * search past its deadline ends). So this thread compiles the search modules once, with the
 * compiler already at hand, and hands the thread the JavaScript to run in their place.
 */

export interface ThreadEntry {
  filename: string;
  eval: boolean;
  workerData?: { compiled: Record<string, string>; entry: string };
}

type Compile = (source: string, filename: string) => string;

function loadCompiler(): Compile {
  try {
    // Installed with @temporalio/worker (its bundler uses it); safe on this never-terminated thread.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const swc = require('@swc/core') as typeof import('@swc/core');
    return (source, filename) =>
      swc.transformSync(source, {
        filename,
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'commonjs' },
      }).code;
  } catch {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ts = require('typescript') as typeof import('typescript');
    return (source, filename) =>
      ts.transpileModule(source, {
        fileName: filename,
        compilerOptions: {
          module: ts.ModuleKind.CommonJS,
          target: ts.ScriptTarget.ES2022,
          esModuleInterop: true,
          isolatedModules: true,
        },
      }).outputText;
  }
}

/** `entry` and every local module it imports, compiled. */
function compileClosure(entry: string): Record<string, string> {
  const compile = loadCompiler();
  const compiled: Record<string, string> = {};
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (compiled[file] !== undefined) continue;
    const source = readFileSync(file, 'utf8');
    compiled[file] = compile(source, file);
    for (const m of source.matchAll(/(?:from|import|require\()\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = path.resolve(path.dirname(file), m[1] as string);
      const candidates = [`${target}.ts`, path.join(target, 'index.ts')];
      const found = candidates.find((c) => existsSync(c));
      if (found) pending.push(found);
    }
  }
  return compiled;
}

const BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
const compiled = workerData.compiled;
require.extensions['.ts'] = (module, filename) => {
  const code = compiled[filename];
  if (code === undefined) throw new Error('thread: no compiled code for ' + filename);
  module._compile(code, filename);
};
require(workerData.entry);
`;

/**
 * Where a thread starts: the module `name` in `dir` (by default the search thread beside this file).
 * Computed once per process by each pool that uses it; the output validator's pool
 * (src/activities/output-check-pool.ts) starts its threads the same way.
 */
export function threadEntry(dir: string = __dirname, name = 'thread'): ThreadEntry {
  const js = path.join(dir, `${name}.js`);
  if (existsSync(js)) return { filename: js, eval: false };
  const ts = path.join(dir, `${name}.ts`);
  const compiled = compileClosure(ts);
  return { filename: BOOTSTRAP, eval: true, workerData: { compiled, entry: ts } };
}
