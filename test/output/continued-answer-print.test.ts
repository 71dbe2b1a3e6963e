/**
 * An answer cut at `max_tokens` and continued by the next call is printed once by `run`/`follow`:
 * the events and the result carry the joined answer, which extends what both calls streamed.
 */
import { RunPrinter } from '../../src/cli/live-events';
import type { AgentRunResult, RunEvent, RunEventInput } from '../../src/shared';

let seq = 0;
const ev = (e: RunEventInput) => ({ ...e, seq: ++seq }) as RunEvent;
const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const finished = (iteration: number, text: string, stopReason: 'end_turn' | 'max_tokens' | 'tool_use') =>
  ev({ kind: 'model_call_finished', iteration, stopReason, usage, costUsd: 0, text });
const result = (finalText: string): AgentRunResult => ({
  exitReason: 'completed',
  finalText,
  iterations: 2,
  usage,
  costUsd: 0,
  model: 'm',
});
const spinner = { start() {}, stop() {}, clear() {} };
const continueNotice = ev({ kind: 'notice', message: 'response reached max_tokens (5); asking the model to continue' });

function printer() {
  const chunks: string[] = [];
  const sink = { styled: false, write: (c: string) => void chunks.push(c) };
  const p = new RunPrinter(sink, (line) => sink.write(`${line}\n`), spinner, 'run-1');
  return { p, text: () => chunks.join('') };
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

test('streamed live: the continued answer is printed once, first part then the rest', () => {
  const { p, text } = printer();
  p.events([ev({ kind: 'model_call_started', iteration: 1 })]);
  p.snapshot({ call: 'r/1', attempt: 1, text: { chars: 15, tail: 'The first half ' } });
  p.events([finished(1, 'The first half ', 'max_tokens'), continueNotice]);
  p.events([ev({ kind: 'model_call_started', iteration: 2 })]);
  p.snapshot({ call: 'r/2', attempt: 1, text: { chars: 13, tail: 'and the rest.' } });
  const whole = 'The first half and the rest.';
  p.events([
    finished(2, 'and the rest.', 'end_turn'),
    ev({ kind: 'answer', text: whole }),
    ev({ kind: 'run_finished', exitReason: 'completed', finalText: whole }),
  ]);
  expect(p.finish(result(whole))).toBe(true);
  const out = text();
  expect(count(out, 'The first half')).toBe(1);
  expect(count(out, 'and the rest.')).toBe(1);
  expect(out.indexOf('The first half')).toBeLessThan(out.indexOf('and the rest.'));
});

test('from the events alone (no live stream): each part once', () => {
  const { p, text } = printer();
  const whole = 'The first half and the rest.';
  p.events([
    ev({ kind: 'model_call_started', iteration: 1 }),
    finished(1, 'The first half ', 'max_tokens'),
    continueNotice,
    ev({ kind: 'model_call_started', iteration: 2 }),
    finished(2, 'and the rest.', 'end_turn'),
    ev({ kind: 'answer', text: whole }),
    ev({ kind: 'run_finished', exitReason: 'completed', finalText: whole }),
  ]);
  expect(p.finish(result(whole))).toBe(true);
  const out = text();
  expect(count(out, 'The first half')).toBe(1);
  expect(count(out, 'and the rest.')).toBe(1);
});

test('a call after a cut turn that does not continue its text (cut tool calls) prints its own answer once', () => {
  const { p, text } = printer();
  p.events([ev({ kind: 'model_call_started', iteration: 1 })]);
  p.snapshot({ call: 'r/1', attempt: 1, text: { chars: 9, tail: 'Writing: ' } });
  p.events([finished(1, 'Writing: ', 'max_tokens'), continueNotice]);
  p.events([ev({ kind: 'model_call_started', iteration: 2 })]);
  p.snapshot({ call: 'r/2', attempt: 1, text: { chars: 5, tail: 'Done.' } });
  p.events([
    finished(2, 'Done.', 'end_turn'),
    ev({ kind: 'answer', text: 'Done.' }),
    ev({ kind: 'run_finished', exitReason: 'completed', finalText: 'Done.' }),
  ]);
  expect(p.finish(result('Done.'))).toBe(true);
  expect(count(text(), 'Done.')).toBe(1);
});
