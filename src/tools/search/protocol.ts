/**
 * What crosses between a tool and its search thread: plain, structured-cloneable data only.
 */

export type GrepMode = 'content' | 'files_with_matches' | 'count';

export interface GrepQuery {
  pattern: string;
  caseInsensitive: boolean;
  mode: GrepMode;
  /** Context lines (content mode only). */
  before: number;
  after: number;
  /** Real absolute workspace root: hit paths are made relative to it, and nothing outside it is read. */
  root: string;
  /** Real absolute file or directory to search. */
  base: string;
  baseIsFile: boolean;
  glob?: string;
  /** Globs of the `type` filter (file-types.ts), matched against base names; combined with `glob`. */
  typeGlobs?: string[];
  /** Matches may span lines (`-U --multiline-dotall`); reported at the line where they start. */
  multiline?: boolean;
  /** Leave out what `.gitignore` files (and `.git/info/exclude`) exclude (gitignore.ts). */
  gitignore?: boolean;
}

export interface GrepLine {
  lineNumber: number;
  /** The line without its terminator (and without a `\r` before it); cut when very long. */
  text: string;
  /** The line's full length in characters when `text` holds only its start. */
  length?: number;
  isMatch: boolean;
}

/** What one file contributed. `lines` is filled in content mode only, in line order. */
export interface GrepFileHits {
  /** `/`-separated, relative to the workspace root. */
  path: string;
  matchCount: number;
  lines: GrepLine[];
}

export interface GrepResult {
  /** In path order. */
  hits: GrepFileHits[];
  /** Matching files left out of `hits` (files_with_matches and count modes) by GREP_MAX_FILE_HITS. */
  filesNotKept?: number;
  /** Things the model should know about how the search was limited (huge lines). */
  notes: string[];
  /** The search named one file, and it is binary (holds a NUL byte): it was skipped. */
  binaryBase?: boolean;
}

export interface GlobQuery {
  /** Real absolute workspace root. */
  root: string;
  /** Real absolute directory to walk. */
  base: string;
  /** The pattern part matched against paths relative to `base`. */
  pattern: string;
  /** Directory names not entered. */
  skipNames: string[];
  /** Paths kept; the rest are only counted. */
  maxResults: number;
  /** Leave out what `.gitignore` files (and `.git/info/exclude`) exclude (gitignore.ts). */
  gitignore?: boolean;
}

export interface GlobResult {
  /** The first `maxResults` matches in path order, relative to `base`. */
  matches: string[];
  total: number;
  /** How ignore files were limited (a file not applied, patterns left out). */
  notes?: string[];
  /** Files and directories left out by ignore files (a directory counts once). */
  ignored?: number;
}

export type SearchJob = { kind: 'grep'; query: GrepQuery } | { kind: 'glob'; query: GlobQuery };

/** A search's answer; `refused` is a pattern or request the model should change. */
export type SearchReply<R> = { ok: true; value: R } | { ok: false; message: string };

export interface ThreadRequest {
  id: number;
  job: SearchJob;
}

export interface ThreadResponse {
  id: number;
  reply: SearchReply<GrepResult | GlobResult>;
}
