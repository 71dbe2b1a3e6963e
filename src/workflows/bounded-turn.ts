import { patched } from '@temporalio/workflow';
import {
  MAX_MODEL_VALUE_DEPTH,
  toolResultBlock,
  unrunnableInput,
  type RunEventInput,
  type ToolUseBlock,
} from '../shared';
import { formatObservation, parseToolReply, type ParsedToolReply } from '../shared/text-protocol';
import type { ToolDispatch, TurnResults } from './tool-dispatch';

/**
 * Model values bounded before workflow code walks them (overdeep tool input, text-protocol
 * parameters) and every spelling of `</observation>` escaped. Asked only when it matters, so runs
 * recorded before it replay as they ran.
 */
const BOUNDED_MODEL_VALUES = 'bounded-model-values';

/** Tool calls in a turn that stopped at a stop sequence or with no stop reason run (before: dropped). */
export const TOOLS_AT_ANY_STOP = 'tool-calls-at-any-stop';

/**
 * Runs a turn's tool calls, except those whose input cannot be run (too deep to walk, or refused
 * by the model activity for that reason): each of those gets an `is_error` result naming the
 * bound, in its place among the results.
 */
export async function runBoundedTurn(
  tools: ToolDispatch,
  toolUses: ToolUseBlock[],
  emit: (event: RunEventInput) => void,
): Promise<TurnResults> {
  const refused = new Map<ToolUseBlock, string>();
  for (const t of toolUses) {
    const why = unrunnableInput(t.input);
    if (why !== undefined) refused.set(t, why);
  }
  if (refused.size === 0 || !patched(BOUNDED_MODEL_VALUES)) return tools.runTurn(toolUses);
  emit({
    kind: 'notice',
    message: `${refused.size} tool call(s) not run: input nested deeper than ${MAX_MODEL_VALUE_DEPTH} levels`,
  });
  const ran = await tools.runTurn(toolUses.filter((t) => !refused.has(t)));
  let next = 0;
  const results = toolUses.map((t) => {
    const why = refused.get(t);
    return why !== undefined ? toolResultBlock(t.id, why, true) : ran.results[next++]!;
  });
  return { ...ran, results };
}

/** A text-protocol reply, its parameters bounded in depth (as runs recorded before read it, for those). */
export function parseBoundedReply(text: string, toolNames: readonly string[]): ParsedToolReply {
  const parsed = parseToolReply(text, toolNames, { maxDepth: MAX_MODEL_VALUE_DEPTH });
  if (parsed.kind === 'malformed' && parsed.overBound && !patched(BOUNDED_MODEL_VALUES)) {
    return parseToolReply(text, toolNames);
  }
  return parsed;
}

/** The observation carrying a tool's result, every spelling of its closing tag escaped in the content. */
export function observationOf(name: string, content: string, isError: boolean): string {
  const strict = /<\s*\/\s*observation/i.test(content) && patched(BOUNDED_MODEL_VALUES);
  return formatObservation(name, content, isError, strict);
}
