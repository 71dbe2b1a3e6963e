import { replyProse } from '../../shared/text-protocol';
import type { LoopExit } from '../run/loop-exit';
import type { Run } from '../run/run';
import { observationOf, parseBoundedReply } from './bounded-turn';
import { finishTurn } from './finish';
import { runToolTurn } from './tool-turn';

/**
 * A text-only turn under the text protocol (`toolProtocol: 'xml'`): one `<tool_code>` call runs and
 * its result goes back as an `<observation>`; a malformed block gets an observation that says what
 * was wrong; no block (or `<final_answer>`) is the final answer, handled as any other.
 */
export async function textToolTurn(
  run: Run,
  text: string,
): Promise<{ exit: LoopExit | undefined } | { answer: string }> {
  const { state, emit } = run;
  const { conversation } = state;
  const { textTools, requireDone, openTextTools } = run.settings;
  // The run's MCP tools may be called too (they change between turns).
  // Without a tool list, the worker's own tools parse by any name (MCP tools are known here by name).
  const parsed = parseBoundedReply(
    text,
    [...(textTools ?? []), ...run.mcp.names()],
    openTextTools ? (name) => !name.startsWith('mcp__') : undefined,
  );
  // The model's words only (its thought before a block); the call itself is narrated as a tool call.
  // A final reply is the answer, unless only `done` may end the run: then it is narrated as text.
  const prose = parsed.kind === 'final' ? (requireDone ? parsed.text : '') : replyProse(text);
  if (prose) emit({ kind: 'text', iteration: state.iteration, text: prose });
  if (parsed.kind === 'final') return { answer: parsed.text };
  if (parsed.kind === 'malformed') {
    emit({ kind: 'notice', message: 'the model wrote a tool call the text protocol cannot run; told it why' });
    conversation.append({ role: 'user', content: parsed.observation });
    return { exit: undefined };
  }
  state.textPrefix = '';
  const call = {
    type: 'tool_use' as const,
    id: `text-call-${state.iteration}`,
    name: parsed.name,
    input: parsed.input,
  };
  const { results, doneSummary } = await runToolTurn(run, [call]);
  const result = results[0]!;
  conversation.append({
    role: 'user',
    content: observationOf(parsed.name, result.content, result.is_error === true),
  });
  return { exit: doneSummary !== undefined ? await finishTurn(run, doneSummary) : undefined };
}
