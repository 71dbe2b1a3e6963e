/**
 * Glob and grep run here, off the thread that runs workflow tasks and activities: the tools post a
 * job to a worker thread (pool.ts) that walks the tree (tree.ts) and matches with RE2 (regex.ts,
 * grep-scan.ts) under a deadline, with every bound named in limits.ts.
 */
import { plural } from '../text';
import type { ToolContext } from '../types';
import { searchPool } from './pool';
import type { SearchJob } from './protocol';
import type { GlobResult, GrepResult } from './protocol';

export type { GlobQuery, GlobResult, GrepFileHits, GrepLine, GrepMode, GrepQuery, GrepResult } from './protocol';
export { SEARCH_DEADLINE_MS } from './limits';

/** A search that ended without an answer, with the reason the model is shown. */
export class SearchStopped extends Error {
  override readonly name = 'SearchStopped';
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? plural(ms / 1000, 'second') : `${(ms / 1000).toFixed(1)} seconds`;
}

/**
 * Run a search job in the shared pool and return its value; throws an Error whose message is what
 * the model should read (refused pattern, deadline, cancellation, thread failure).
 */
export async function runSearch<R extends GrepResult | GlobResult>(
  tool: 'glob' | 'grep',
  job: SearchJob,
  ctx: ToolContext,
  deadlineMs: number,
): Promise<R> {
  const outcome = await searchPool().run<R>(job, { deadlineMs, signal: ctx.signal });
  switch (outcome.kind) {
    case 'done':
      if (outcome.reply.ok) return outcome.reply.value;
      throw new SearchStopped(outcome.reply.message);
    case 'stopped':
      throw new SearchStopped(
        outcome.why === 'deadline'
          ? `${tool} was stopped after ${duration(deadlineMs)}, its time limit, before it finished. ` +
              'Search a smaller part of the workspace (path, glob) or use a more specific pattern.'
          : `${tool} was stopped because the call was cancelled.`,
      );
    case 'failed':
      throw new SearchStopped(`${tool} did not finish: ${outcome.message}.`);
  }
}
