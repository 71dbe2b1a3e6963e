import { MAX_MODEL_VALUE_DEPTH, unrunnableInput } from '../../shared/bounds';
import { toolResultBlock } from '../../shared/conversation';
import type { ToolUseBlock } from '../../shared/messages';
import { formatObservation, parseToolReply, type ParsedToolReply } from '../../shared/text-protocol';
import type { Run } from '../run/run';
import type { TurnResults } from './tool-results';
import { runToolTurn } from './tool-turn';

/**
 * Runs a turn's tool calls, except those whose input cannot be run (too deep to walk, or refused
 * by the model activity for that reason): each of those gets an `is_error` result naming the
 * bound, in its place among the results.
 */
export function runBoundedTurn(run: Run, toolUses: ToolUseBlock[]): Promise<TurnResults> {
  const refused = new Map<ToolUseBlock, string>();
  for (const t of toolUses) {
    const why = unrunnableInput(t.input);
    if (why !== undefined) refused.set(t, why);
  }
  return refused.size === 0 ? runToolTurn(run, toolUses) : runWithRefused(run, toolUses, refused);
}

async function runWithRefused(
  run: Run,
  toolUses: ToolUseBlock[],
  refused: ReadonlyMap<ToolUseBlock, string>,
): Promise<TurnResults> {
  run.emit({
    kind: 'notice',
    message: `${refused.size} tool call(s) not run: input nested deeper than ${MAX_MODEL_VALUE_DEPTH} levels`,
  });
  const ran = await runToolTurn(
    run,
    toolUses.filter((t) => !refused.has(t)),
  );
  let next = 0;
  const results = toolUses.map((t) => {
    const why = refused.get(t);
    return why !== undefined ? toolResultBlock(t.id, why, true) : ran.results[next++]!;
  });
  return { ...ran, results };
}

/** A text-protocol reply, its parameters bounded in depth before workflow code walks them. */
export function parseBoundedReply(
  text: string,
  toolNames: readonly string[],
  acceptName?: (name: string) => boolean,
): ParsedToolReply {
  return parseToolReply(text, toolNames, { maxDepth: MAX_MODEL_VALUE_DEPTH, ...(acceptName ? { acceptName } : {}) });
}

/** The observation carrying a tool's result, every spelling of its closing tag escaped in the content. */
export function observationOf(name: string, content: string, isError: boolean): string {
  return formatObservation(name, content, isError);
}
