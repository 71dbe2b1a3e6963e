/**
 * Figure: the glob/grep engine's time on a 100 MB tree, next to the engine it replaced, measured in
 * the same run on the same tree.
 *
 * - ours: the real tools (RE2 in a search thread, files streamed in chunks), called through the tool
 *   registry as a run would, thread hop included;
 * - before: the JavaScript engine of commit BASELINE_COMMIT (backtracking RegExp on the worker's main
 *   thread, each file read whole), loaded from git history into a temporary folder and compiled
 *   there, so no copy of it lives in src/. Without git history the baseline column says n/a.
 *
 * Run alone: `npx tsc -p tsconfig.build.json && node dist/bench/search-figure.js`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createGlobTool, createGrepTool, ToolRegistry } from '../src/tools';
import { searchPool } from '../src/tools/search/pool';
import type { Tool, ToolContext } from '../src/tools/types';
import { median, MiB, ms, table } from './stats';

/** The last commit with the JavaScript engine (src/tools/grep-engines.ts, glob-pattern.ts, walk.ts). */
export const BASELINE_COMMIT = '0a64608';
const REPETITIONS = 5;
const TREE_BYTES = 100 * MiB;
const FILE_BYTES = 100 * 1024;

export interface SearchCase {
  label: string;
  tool: 'grep' | 'glob';
  input: Record<string, unknown>;
}

export const SEARCH_CASES: SearchCase[] = [
  { label: 'grep literal, files_with_matches', tool: 'grep', input: { pattern: 'needle_0042' } },
  {
    label: 'grep \\bfunction\\s+\\w+\\(, count',
    tool: 'grep',
    input: { pattern: '\\bfunction\\s+\\w+\\(', output_mode: 'count' },
  },
  {
    label: 'grep todo -i, content, head 50',
    tool: 'grep',
    input: { pattern: 'todo', case_insensitive: true, output_mode: 'content', head_limit: 50 },
  },
  {
    label: 'grep rare word, *.ts only',
    tool: 'grep',
    input: { pattern: 'needle_\\d+', glob: '*.ts', output_mode: 'count' },
  },
  { label: 'glob **/*.ts', tool: 'glob', input: { pattern: '**/*.ts' } },
  { label: 'glob d*/**/m*_{1,2}?.{ts,md}', tool: 'glob', input: { pattern: 'd*/**/m*_{1,2}?.{ts,md}' } },
];

export interface SearchRow {
  label: string;
  /** Median ms of the tool as it runs now. */
  oursMs: number;
  /** Median ms of the engine before (NaN when it could not be loaded). */
  beforeMs: number;
  /** Both engines gave the same answer (the model would see the same text). */
  sameOutput: boolean | undefined;
}

export interface SearchFigure {
  treeBytes: number;
  files: number;
  rows: SearchRow[];
  baseline: string;
}

/** A deterministic source-like tree of about `TREE_BYTES`. */
function writeTree(root: string): number {
  const words = ['const', 'value', 'function', 'return', 'import', 'export', 'await', 'helper', 'TODO', 'result'];
  let files = 0;
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let written = 0; written < TREE_BYTES; written += FILE_BYTES) {
    const dir = path.join(root, `d${files % 10}`, `e${files % 7}`);
    mkdirSync(dir, { recursive: true });
    let text = '';
    let line = 0;
    while (text.length < FILE_BYTES) {
      const n = next();
      const w = (k: number) => words[(n >> k) % words.length] as string;
      text +=
        line % 50 === 0
          ? `export function ${w(3)}_${line}(${w(5)}) {\n`
          : `  ${w(2)} ${w(6)}_${n % 1000} = ${w(9)}(${n % 97}); // ${line % 200 === 7 ? 'todo: check' : w(12)}\n`;
      line++;
    }
    if (files % 37 === 0) text += `// needle_${String(files % 100).padStart(4, '0')}\n`;
    writeFileSync(path.join(dir, `m${files}_${files % 30}.${files % 3 === 0 ? 'md' : 'ts'}`), text);
    files++;
  }
  return files;
}

interface Baseline {
  run(c: SearchCase, ctx: ToolContext): Promise<string>;
}

/** The engine of BASELINE_COMMIT, compiled from git history into `dir`; undefined without git. */
function loadBaseline(dir: string): Baseline | undefined {
  let ts: typeof import('typescript');
  const compiled: Record<string, string> = {};
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ts = require('typescript') as typeof import('typescript');
    const repo = path.resolve(__dirname, '..', __dirname.includes(`${path.sep}dist${path.sep}`) ? '..' : '');
    for (const name of ['grep-engines', 'glob-pattern', 'walk', 'grep', 'glob', 'text', 'define-tool', 'workspace']) {
      const source = execFileSync('git', ['show', `${BASELINE_COMMIT}:src/tools/${name}.ts`], {
        cwd: repo,
        encoding: 'utf8',
      });
      compiled[name] = ts.transpileModule(source, {
        compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      }).outputText;
    }
  } catch {
    return undefined;
  }
  const tools = path.join(dir, 'src', 'tools');
  mkdirSync(tools, { recursive: true });
  for (const [name, code] of Object.entries(compiled)) {
    // Its imports of packages and of today's shared constants resolve from here, as absolute paths.
    const linked = code.replace(/require\("([^"]+)"\)/g, (whole, id: string) => {
      if (id.startsWith('./') || id.startsWith('node:')) return whole;
      return `require(${JSON.stringify(require.resolve(id.startsWith('../') ? path.join('../src/tools', id) : id))})`;
    });
    writeFileSync(path.join(tools, `${name}.js`), linked);
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const grep = require(path.join(tools, 'grep.js')) as { createGrepTool(options: { engine: 'js' }): Tool };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const glob = require(path.join(tools, 'glob.js')) as typeof import('../src/tools/glob');
  const registry = new ToolRegistry([glob.createGlobTool(), grep.createGrepTool({ engine: 'js' })]);
  return {
    async run(c, ctx) {
      return (await registry.run(c.tool, c.input, ctx)).content;
    },
  };
}

async function timed(fn: () => Promise<string>): Promise<{ msList: number[]; output: string }> {
  const msList: number[] = [];
  let output = '';
  for (let i = 0; i < REPETITIONS; i++) {
    const start = performance.now();
    output = await fn();
    msList.push(performance.now() - start);
  }
  return { msList, output };
}

/** Measure every case with both engines on a fresh 100 MB tree (removed afterwards). */
export async function measureSearch(): Promise<SearchFigure> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'da-bench-search-'));
  const baselineDir = mkdtempSync(path.join(os.tmpdir(), 'da-bench-search-baseline-'));
  try {
    const workspace = path.join(root, 'ws');
    mkdirSync(workspace);
    const files = writeTree(workspace);
    const ctx: ToolContext = {
      workspace,
      signal: new AbortController().signal,
      heartbeat: () => {},
      toolUseId: 'bench',
    };
    const ours = new ToolRegistry([createGlobTool({ deadlineMs: 120_000 }), createGrepTool({ deadlineMs: 120_000 })]);
    const baseline = loadBaseline(baselineDir);
    const rows: SearchRow[] = [];
    for (const c of SEARCH_CASES) {
      const now = await timed(async () => (await ours.run(c.tool, c.input, ctx)).content);
      const before = baseline ? await timed(() => baseline.run(c, ctx)) : undefined;
      rows.push({
        label: c.label,
        oursMs: median(now.msList),
        beforeMs: before ? median(before.msList) : NaN,
        sameOutput: before ? before.output === now.output : undefined,
      });
    }
    return {
      treeBytes: TREE_BYTES,
      files,
      rows,
      baseline: baseline ? `commit ${BASELINE_COMMIT}` : 'n/a (no git history)',
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
    rmSync(baselineDir, { recursive: true, force: true });
    await searchPool().close();
  }
}

export function formatSearchFigure(figure: SearchFigure): string {
  const header = [
    'case',
    'ours (RE2, thread) ms',
    `before (JS RegExp, ${figure.baseline}) ms`,
    'ours / before',
    'same output',
  ];
  const rows = figure.rows.map((r) => [
    r.label,
    ms(r.oursMs, 0),
    ms(r.beforeMs, 0),
    Number.isFinite(r.beforeMs) ? `${(r.oursMs / r.beforeMs).toFixed(2)}×` : 'n/a',
    r.sameOutput === undefined ? 'n/a' : r.sameOutput ? 'yes' : 'NO',
  ]);
  return [
    `glob/grep engine on a ${(figure.treeBytes / MiB).toFixed(0)} MiB tree of ${figure.files} files, median of ${REPETITIONS} runs each`,
    table([header, ...rows]),
    'Reproduce: npx tsc -p tsconfig.build.json && node dist/bench/search-figure.js',
  ].join('\n');
}

if (require.main === module) {
  measureSearch().then(
    (figure) => console.log(formatSearchFigure(figure)),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
