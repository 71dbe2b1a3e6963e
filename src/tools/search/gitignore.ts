import { closeSync, readSync } from 'node:fs';
import * as path from 'node:path';
import RE2 from 're2';
import { globToSource } from './glob-pattern';
import {
  GITIGNORE_MAX_FILE_BYTES,
  GITIGNORE_MAX_LINE_CHARS,
  GITIGNORE_MAX_PATTERNS_PER_FILE,
  GITIGNORE_MAX_PATTERNS_TOTAL,
} from './limits';
import { openInside } from './tree';

/**
 * `.gitignore` rules for glob and grep, as git and ripgrep apply them: each directory's
 * `.gitignore` (and the workspace's `.git/info/exclude`) excludes paths relative to its directory,
 * deeper files override shallower ones, the last matching line of a file wins, `!` re-includes, a
 * trailing `/` matches directories only, a pattern with a `/` before its end is anchored to its
 * directory, one without matches a name at any depth, and nothing below an excluded directory is
 * looked at. Files outside the workspace (a parent repository's rules, the user's global excludes)
 * are never read.
 *
 * The model can write these files, so they are hostile: they are read through descriptors checked
 * to lie inside the workspace (never through a symlink), each read and each line is bounded, so is
 * the number of patterns a search loads, and every file's patterns are compiled into one RE2 set:
 * matching a path costs time linear in the path, whatever the patterns (`*a*a*a*a*a*a*b` included).
 * A file that cannot be compiled is skipped with a note, never a failed search.
 */

/** One `.gitignore` (or `info/exclude`): its patterns compiled together. */
export interface IgnoreRules {
  /** `/`-separated directory of the file, relative to the workspace root ('' for the root). */
  dir: string;
  set: InstanceType<typeof RE2.Set>;
  negate: boolean[];
  dirOnly: boolean[];
}

interface ParsedPattern {
  glob: string;
  negate: boolean;
  dirOnly: boolean;
}

/** In a gitignore pattern `{`, `}` and `,` are plain characters; in our globs they are syntax. */
function escapeBraces(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) {
      out += c + (pattern[++i] as string);
    } else out += c === '{' || c === '}' || c === ',' ? `\\${c}` : c;
  }
  return out;
}

/** One line of a gitignore file as a glob relative to the file's directory, or undefined (blank, comment). */
export function parseIgnoreLine(raw: string): ParsedPattern | undefined {
  let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  if (line === '' || line.startsWith('#') || line.length > GITIGNORE_MAX_LINE_CHARS) return undefined;
  // Trailing spaces are dropped unless escaped (`foo\ `). Loops, not regular expressions: linear time.
  let end = line.length;
  while (end > 0 && line[end - 1] === ' ' && line[end - 2] !== '\\') end--;
  line = line.slice(0, end);
  const negate = line.startsWith('!');
  if (negate) line = line.slice(1);
  const dirOnly = line.endsWith('/');
  while (line.endsWith('/')) line = line.slice(0, -1);
  const anchored = line.includes('/');
  let start = 0;
  while (line[start] === '/') start++;
  line = line.slice(start);
  if (line === '') return undefined;
  const glob = escapeBraces(line);
  return { glob: anchored ? glob : `**/${glob}`, negate, dirOnly };
}

/** Compile a gitignore file's text; `undefined` with a note when it holds no usable pattern or cannot be compiled. */
export function compileIgnoreRules(
  text: string,
  dir: string,
  budget: { patterns: number },
  notes: string[],
): IgnoreRules | undefined {
  const where = dir === '' ? '.gitignore' : `${dir}/.gitignore`;
  const parsed: ParsedPattern[] = [];
  for (const line of text.split('\n')) {
    const pattern = parseIgnoreLine(line);
    if (!pattern) continue;
    if (parsed.length >= GITIGNORE_MAX_PATTERNS_PER_FILE || budget.patterns >= GITIGNORE_MAX_PATTERNS_TOTAL) {
      notes.push(`Only the first ${parsed.length} patterns of ${where} were applied (ignore files are bounded).`);
      break;
    }
    parsed.push(pattern);
    budget.patterns++;
  }
  if (parsed.length === 0) return undefined;
  try {
    const set = new RE2.Set(
      parsed.map((p) => globToSource(p.glob)),
      's',
      { anchor: 'unanchored' },
    );
    return { dir, set, negate: parsed.map((p) => p.negate), dirOnly: parsed.map((p) => p.dirOnly) };
  } catch (error) {
    notes.push(`${where} was not applied: its patterns could not be compiled (${String(error)}).`);
    return undefined;
  }
}

/** Reads at most GITIGNORE_MAX_FILE_BYTES of a file inside `root`; undefined when absent or not a safe regular file. */
function readBounded(root: string, absolute: string): string | undefined {
  const fd = openInside(root, absolute, false);
  if (fd === undefined) return undefined;
  try {
    const buffer = Buffer.alloc(GITIGNORE_MAX_FILE_BYTES);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return buffer.subarray(0, length).toString('utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * The ignore rules of one search: which directories' rules apply, loaded as the walk enters them.
 * `chain` holds the rules in force for the directory being listed, shallowest first.
 */
export class IgnoreFilter {
  readonly notes: string[] = [];
  /** Files and directories left out so far (a directory counts once, whatever it holds). */
  excluded = 0;
  private readonly budget = { patterns: 0 };

  constructor(private readonly root: string) {}

  /** `.git/info/exclude` of the workspace (when it is a repository's root), as the lowest-precedence rules. */
  excludeFile(): IgnoreRules | undefined {
    const text = readBounded(this.root, path.join(this.root, '.git', 'info', 'exclude'));
    return text === undefined ? undefined : this.compile(text, '');
  }

  /** The `.gitignore` of a directory (`dir` relative to the root), if it has one. */
  rulesIn(dir: string): IgnoreRules | undefined {
    const text = readBounded(this.root, path.join(this.root, dir, '.gitignore'));
    return text === undefined ? undefined : this.compile(text, dir);
  }

  /** The rules in force in directory `dir` (relative to the root): the exclude file, then every `.gitignore` from the root down. */
  chainFor(dir: string): IgnoreRules[] {
    const chain: IgnoreRules[] = [];
    const exclude = this.excludeFile();
    if (exclude) chain.push(exclude);
    const parts = dir === '' ? [] : dir.split('/');
    for (let i = 0; i <= parts.length; i++) {
      const rules = this.rulesIn(parts.slice(0, i).join('/'));
      if (rules) chain.push(rules);
    }
    return chain;
  }

  /** Whether `rel` (relative to the root) is excluded by `chain`: the deepest file with a matching line decides. */
  ignored(chain: readonly IgnoreRules[], rel: string, isDirectory: boolean): boolean {
    for (let i = chain.length - 1; i >= 0; i--) {
      const rules = chain[i] as IgnoreRules;
      const local = rules.dir === '' ? rel : rel.slice(rules.dir.length + 1);
      let last = -1;
      for (const index of rules.set.match(local)) {
        if (index > last && (isDirectory || !rules.dirOnly[index])) last = index;
      }
      if (last < 0) continue;
      if (rules.negate[last]) return false;
      this.excluded++;
      return true;
    }
    return false;
  }

  private compile(text: string, dir: string): IgnoreRules | undefined {
    return compileIgnoreRules(text, dir, this.budget, this.notes);
  }
}
