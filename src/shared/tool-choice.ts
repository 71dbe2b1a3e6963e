import { z } from 'zod';
import { onFirstUse } from './built-once';

/**
 * The run input's `toolChoice`: `auto` (the default: the model decides), `none` (no tool calls:
 * the model answers from the prompt alone), `any` (or its alias `required`: the model must call a
 * tool, until it has called one, or on every call in done-tool mode), or `{type: 'tool', name}` (the
 * model must call that tool, until it has; later calls are `auto`, so the run can end).
 */
export const toolChoiceSchema = onFirstUse('tool-choice', () =>
  z.union(
    [
      z.enum(['auto', 'none', 'any', 'required']),
      z.strictObject({ type: z.literal('tool'), name: z.string().min(1, 'toolChoice.name must name a tool').max(128) }),
    ],
    { error: () => `toolChoice must be 'auto', 'none', 'any', 'required' or {"type": "tool", "name": "<tool>"}` },
  ),
);
export type RunToolChoice = z.output<ReturnType<typeof toolChoiceSchema>>;

/** The choice requires a tool call (`any`, `required`, a named tool). */
export function mustCallTool(choice: RunToolChoice | undefined): boolean {
  return choice === 'any' || choice === 'required' || typeof choice === 'object';
}

/** Models that reject a forced tool choice (`any`/`tool`): the 5.5 generation of Claude. */
export function rejectsForcedToolChoice(model: string): boolean {
  return /^claude-(opus|sonnet|haiku)-5-5(\b|-|$)/.test(model);
}

/** Why a run's `toolChoice` cannot be used with its model and protocol, or undefined. */
export function toolChoiceProblem(
  choice: RunToolChoice,
  _model: string,
  toolProtocol: string | undefined,
): string | undefined {
  if (choice === 'auto') return undefined;
  if (toolProtocol === 'xml') {
    return "toolChoice other than 'auto' needs native tool calling; the text protocol (toolProtocol 'xml') has none";
  }
  // A model that rejects a forced choice (`rejectsForcedToolChoice`) is not refused: the workflow asks
  // again when it answers without the required call (src/workflows/calls/tool-choice.ts).
  return undefined;
}
