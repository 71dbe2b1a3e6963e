import { cutBytes, utf8Length } from '../../shared/bounds';
import { MAX_TURN_TOOL_RESULT_BYTES } from '../../shared/constants';
import { toolResultBlock } from '../../shared/conversation';
import type { ToolResultBlock, ToolUseBlock } from '../../shared/messages';

/** One turn's tool results, and the `done` summary when the turn finished the run. */
export interface TurnResults {
  results: ToolResultBlock[];
  doneSummary?: string;
}

/** The `done` call's summary: a non-empty string, or undefined (the call is then answered with an error). */
export function summaryOf(done: ToolUseBlock | undefined): string | undefined {
  const summary = (done?.input as { summary?: unknown } | undefined)?.summary;
  return typeof summary === 'string' && summary.trim() ? summary : undefined;
}

/** The result of a `done` call: recorded, or an error when it has no summary. */
export function doneResult(t: ToolUseBlock, summary: string | undefined): ToolResultBlock {
  return summary !== undefined
    ? toolResultBlock(t.id, 'Recorded. The run is finished.', false)
    : toolResultBlock(t.id, "Error: 'done' needs a non-empty summary string.", true);
}

/**
 * Cuts the longest results so one turn's results stay within MAX_TURN_TOOL_RESULT_BYTES (the next
 * model call's delta must fit a payload): results under the fair share stay whole, the rest share
 * what is left equally.
 */
export function fitToBudget(results: ToolResultBlock[], budget = MAX_TURN_TOOL_RESULT_BYTES): ToolResultBlock[] {
  const sizes = results.map((r) => utf8Length(r.content));
  if (sizes.reduce((a, b) => a + b, 0) <= budget) return results;
  const ascending = sizes.slice().sort((a, b) => a - b);
  let remaining = budget;
  let cap = 0;
  for (let i = 0; i < ascending.length; i++) {
    const share = remaining / (ascending.length - i);
    if (ascending[i]! > share) {
      cap = Math.floor(share);
      break;
    }
    remaining -= ascending[i]!;
  }
  const note = (size: number) => `\n[output cut to fit the run's history: about ${cap} of ${size} bytes shown]`;
  return results.map((r, i) =>
    sizes[i]! > cap
      ? toolResultBlock(
          r.tool_use_id,
          cutBytes(r.content, Math.max(0, cap - 120), note(sizes[i]!)),
          r.is_error === true,
        )
      : r,
  );
}
