/**
 * The bounds of the glob and grep tools, each with the limit it protects. They hold whatever the
 * model asks for: a search never freezes the worker (it runs in a thread with a deadline), never
 * holds a whole file in memory, and never collects more than the answer can show.
 */

/**
 * A glob or grep call is stopped (its thread terminated) after this long, including time spent
 * waiting for a free thread. Below the local activity's 2-minute start-to-close timeout, so the
 * call ends as an is_error result the model can act on instead of a timed-out attempt that
 * Temporal would retry with the same arguments.
 */
export const SEARCH_DEADLINE_MS = 30_000;

/** Searches running at once per worker process; more wait (their deadline already running). */
export const SEARCH_MAX_THREADS = 4;
/** Threads kept warm between calls (a new one costs a few tens of milliseconds to start). */
export const SEARCH_IDLE_THREADS = 2;
/**
 * Heap of a search thread. A search that would need more (it never should: files are streamed)
 * kills only its thread, with ERR_WORKER_OUT_OF_MEMORY, which becomes an is_error result.
 */
export const SEARCH_THREAD_HEAP_MB = 256;

/** Files are read in chunks of this size; grep never holds more of a file than a chunk and one line. */
export const GREP_CHUNK_BYTES = 1024 * 1024;
/**
 * A line is searched up to this many bytes; the rest of a longer line is skipped, with a note.
 * Large enough for minified bundles (a 10 MB line is searched whole), small enough that one line
 * cannot exhaust memory (a 500 MB file with no newline).
 */
export const GREP_MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Content mode refuses to gather more lines than this (the tool shows far fewer anyway). */
export const GREP_MAX_COLLECTED_LINES = 200_000;
/**
 * Lines whose text is kept (in path order); later lines are only counted. More than the output
 * can ever show: the 30,000-character cap fits fewer than 10,000 lines of at least 3 characters.
 */
export const GREP_MAX_STORED_TEXT_LINES = 20_000;
/**
 * Files kept in files_with_matches and count modes (in path order); later ones are only counted.
 * More than the answer can show (a path and its newline take at least 2 of its 30,000 characters),
 * and 200,000 matching files no longer cross to the main thread to be sorted there.
 */
export const GREP_MAX_FILE_HITS = 20_000;
/**
 * In multiline mode a match may be as long as the file, so the file is held whole: larger files
 * are skipped with a note. The same bound as one line in line mode (patterns that cannot span
 * lines are searched by the streaming line engine, without it).
 */
export const GREP_MULTILINE_MAX_FILE_BYTES = GREP_MAX_LINE_BYTES;
/** Matched lines longer than this are cut (minified files would otherwise fill the answer). */
export const GREP_MAX_LINE_CHARS = 500;
/** Notes about capped lines shown at most (a file of huge lines would otherwise repeat one note). */
export const GREP_MAX_NOTES = 5;

/** At most this many paths are listed by glob; the rest are counted. */
export const GLOB_MAX_RESULTS = 1000;
/** Longer patterns are refused: a pattern is a path, and RE2's program for it must stay small. */
export const MAX_PATTERN_CHARS = 4096;

/**
 * `.gitignore` files are written by whoever writes the workspace, the model included. Only the
 * first 64 KiB of one is read (git's own files are rarely over a few KiB)…
 */
export const GITIGNORE_MAX_FILE_BYTES = 64 * 1024;
/** …a longer line is skipped (a path pattern is never this long)… */
export const GITIGNORE_MAX_LINE_CHARS = 1024;
/** …at most this many patterns of one file are applied (one RE2 set per file must stay small)… */
export const GITIGNORE_MAX_PATTERNS_PER_FILE = 2000;
/** …and of all the files one search loads; later files are skipped, with a note. */
export const GITIGNORE_MAX_PATTERNS_TOTAL = 20_000;
