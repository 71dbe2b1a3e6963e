import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

/**
 * No two folders of src/ import each other, directly or through others (docs/contributing.md,
 * "Layers"). `import-x/no-cycle` in lint sees cycles between modules; this sees them between folders,
 * which is what a reader of the layout relies on: src/safe-fs below src/tools, src/workflows/run below
 * src/workflows/calls. Type-only imports do not count (they are erased). A folder is a folder of src/,
 * or of src/workflows/; a file at the top of src/ is a node of its own.
 */

const SRC = path.join(__dirname, '../../src');

/**
 * Folder cycles that are being removed (issue 40, item 3), each the whole strongly connected group as
 * it stands. A cycle found must lie inside one of these: a new cycle, or one that grew, fails.
 */
const BEING_REMOVED: string[][] = [
  // Run builds its calls and subagents itself (helper work on src/workflows).
  ['workflows/calls', 'workflows/run', 'workflows/subagents'],
  // The inspector reuses the CLI's steering, listing and error messages, and the CLI starts it.
  ['cli', 'inspector'],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

function folderOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts.length === 1) return `(top)/${parts[0]}`;
  if (parts[0] === 'workflows' && parts.length > 2) return `workflows/${parts[1]}`;
  return parts[0]!;
}

function resolveRelative(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

/** The relative modules a file imports or re-exports for their values. */
function valueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, false);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.isTypeOnly) continue;
      const bindings = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((element) => element.isTypeOnly);
      if (!onlyTypes) specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && !statement.isTypeOnly) {
      specifiers.push((statement.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return specifiers
    .filter((s) => s.startsWith('.'))
    .flatMap((s) => resolveRelative(file, s) ?? [])
    .filter((target) => target.startsWith(SRC + path.sep));
}

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    for (const target of valueImports(file)) {
      const to = folderOf(target);
      if (to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Tarjan's strongly connected components with more than one folder: the folder cycles. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no folder of src/ imports itself through others, beyond the cycles being removed', () => {
  const graph = folderGraph();
  // The scan sees the layout: the tools use safe-fs, and the workflow code sees the shared types.
  expect(graph.get('tools')).toContain('safe-fs');
  expect(graph.get('workflows/steps')).toContain('shared');
  const unexpected = cycles(graph).filter(
    (cycle) => !BEING_REMOVED.some((known) => cycle.every((folder) => known.includes(folder))),
  );
  expect(unexpected).toEqual([]);
});

test('a folder cycle is found, through type-only imports not at all', () => {
  const graph = new Map([
    ['a', new Set(['b'])],
    ['b', new Set(['c'])],
    ['c', new Set(['a'])],
    ['d', new Set(['a'])],
  ]);
  expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  // safe-fs imports nothing from tools for its values any more (it did before issue 40).
  expect(folderGraph().get('safe-fs') ?? new Set()).not.toContain('tools');
});
