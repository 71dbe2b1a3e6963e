import { compileIgnoreRules, IgnoreFilter, type IgnoreRules } from '../tools/search/gitignore';

/**
 * What a checkpoint leaves out by rule (docs/checkpoints.md#what-is-left-out):
 * - {@link DEFAULT_CHECKPOINT_IGNORE}: `node_modules/` (rebuilt by the package manager, often larger
 *   than everything else together);
 * - the workspace's `.gitignore` files and `.git/info/exclude`, as git applies them (build output,
 *   caches, `.env` files stay on the machine that made them and are never uploaded);
 * - the worker's `checkpointIgnore` and the run's `checkpointIgnore` (gitignore syntax, relative to the
 *   workspace root), which win over the ignore files (a `.gitignore` cannot re-include them).
 * `.git` itself is recorded: a restored workspace is a repository with the commits the run made.
 * A restore brings back only what was recorded: ignored paths are absent from a restored workspace
 * (run the install or build again), and an exact restore (rewind) keeps the ignored paths it finds.
 */
export const DEFAULT_CHECKPOINT_IGNORE: readonly string[] = ['node_modules/'];

/** At most this many patterns from the worker and the run together; more is refused where they are set. */
export const MAX_CHECKPOINT_IGNORE_PATTERNS = 200;
export const MAX_CHECKPOINT_IGNORE_PATTERN_CHARS = 1024;

/** Why `patterns` cannot be a `checkpointIgnore` list, or `undefined` when it can. */
export function checkpointIgnoreProblem(patterns: unknown): string | undefined {
  if (!Array.isArray(patterns)) return 'checkpointIgnore is a list of gitignore-style patterns';
  if (patterns.length > MAX_CHECKPOINT_IGNORE_PATTERNS) {
    return `checkpointIgnore holds at most ${MAX_CHECKPOINT_IGNORE_PATTERNS} patterns`;
  }
  for (const p of patterns) {
    if (
      typeof p !== 'string' ||
      p.trim() === '' ||
      p.length > MAX_CHECKPOINT_IGNORE_PATTERN_CHARS ||
      /[\0\n\r]/.test(p)
    ) {
      return `each checkpointIgnore pattern is a non-empty line of at most ${MAX_CHECKPOINT_IGNORE_PATTERN_CHARS} characters`;
    }
  }
  return undefined;
}

export interface IgnorePredicate {
  (relativePath: string, isDirectory: boolean): boolean;
  /** Ignore files that were bounded or could not be compiled (said in the checkpoint's omitted list). */
  notes: string[];
}

/**
 * The ignore predicate of one recording or restore of `workspace`. Ignore files are read as the walk
 * enters each directory (hostile files: bounded, read inside the workspace only, RE2), once per
 * directory per recording.
 */
export function checkpointIgnore(workspace: string, patterns: readonly string[] = []): IgnorePredicate {
  const filter = new IgnoreFilter(workspace);
  const notes = filter.notes;
  const fixed = compileIgnoreRules([...DEFAULT_CHECKPOINT_IGNORE, ...patterns].join('\n'), '', { patterns: 0 }, notes);
  // Only directory patterns (the default `node_modules/`): a file's path need not be matched against them.
  const fixedForFiles = fixed !== undefined && fixed.dirOnly.some((d) => !d);
  const chains = new Map<string, IgnoreRules[]>();
  const chainOf = (dir: string): IgnoreRules[] => {
    const known = chains.get(dir);
    if (known) return known;
    let chain: IgnoreRules[];
    if (dir === '') {
      chain = [];
      const exclude = filter.excludeFile();
      if (exclude) chain.push(exclude);
    } else {
      const slash = dir.lastIndexOf('/');
      chain = chainOf(slash < 0 ? '' : dir.slice(0, slash)).slice();
    }
    const own = filter.rulesIn(dir);
    if (own) chain.push(own);
    chains.set(dir, chain);
    return chain;
  };
  const predicate = ((p: string, isDirectory: boolean): boolean => {
    if (fixed && (isDirectory || fixedForFiles) && matches(fixed, p, isDirectory)) return true;
    const slash = p.lastIndexOf('/');
    return filter.ignored(chainOf(slash < 0 ? '' : p.slice(0, slash)), p, isDirectory);
  }) as IgnorePredicate;
  predicate.notes = notes;
  return predicate;
}

function matches(rules: IgnoreRules, p: string, isDirectory: boolean): boolean {
  let last = -1;
  for (const index of rules.set.match(p)) if (index > last && (isDirectory || !rules.dirOnly[index])) last = index;
  return last >= 0 && !rules.negate[last];
}
