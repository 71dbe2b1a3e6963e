import { z } from 'zod';
import { onFirstUse } from './built-once';

/**
 * The run input's `toolChoice`: `auto` (the default: the model decides), `none` (no tool calls:
 * the model answers from the prompt alone), or `{type: 'tool', name}` (the run's first model call
 * must call that tool; later calls are `auto`, so the run can end).
 */
export const toolChoiceSchema = onFirstUse('tool-choice', () =>
  z.union(
    [
      z.enum(['auto', 'none']),
      z.strictObject({ type: z.literal('tool'), name: z.string().min(1, 'toolChoice.name must name a tool').max(128) }),
    ],
    { error: () => `toolChoice must be 'auto', 'none' or {"type": "tool", "name": "<tool>"}` },
  ),
);
export type RunToolChoice = z.output<ReturnType<typeof toolChoiceSchema>>;

/** Models that reject a forced tool choice (`any`/`tool`): the 5.5 generation of Claude. */
export function rejectsForcedToolChoice(model: string): boolean {
  return /^claude-(opus|sonnet|haiku)-5-5(\b|-|$)/.test(model);
}

/** Why a run's `toolChoice` cannot be used with its model and protocol, or undefined. */
export function toolChoiceProblem(
  choice: RunToolChoice,
  model: string,
  toolProtocol: string | undefined,
): string | undefined {
  if (choice === 'auto') return undefined;
  if (toolProtocol === 'xml') {
    return "toolChoice other than 'auto' needs native tool calling; the text protocol (toolProtocol 'xml') has none";
  }
  if (typeof choice === 'object' && rejectsForcedToolChoice(model)) {
    return (
      `model '${model}' rejects a forced tool choice ({"type": "tool"}); use 'auto' or 'none' with it, ` +
      'or a model that allows forcing a tool'
    );
  }
  return undefined;
}
