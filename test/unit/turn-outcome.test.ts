/**
 * How one model turn is classified (src/workflows/steps/turn-outcome.ts): every stop reason maps to one
 * outcome, a refused turn never runs tools, a truncated turn never runs its possibly cut calls.
 * Pure: no server.
 */
import fc from 'fast-check';
import type { ContentBlock, ModelResponse, StopReason } from '../../src/shared';
import { classifyTurn, toolCallsAtQuietStop } from '../../src/workflows/steps/turn-outcome';

const STOP_REASONS: (StopReason | null)[] = [
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
  null,
];

const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), text: fc.string() }),
  fc.record({
    type: fc.constant('tool_use' as const),
    id: fc.string({ minLength: 1 }),
    name: fc.constantFrom('bash', 'read_file', 'x'),
    input: fc.dictionary(fc.string(), fc.string()),
  }),
);

const response = (stopReason: StopReason | null, content: ContentBlock[]): ModelResponse => ({
  id: 'msg',
  model: 'scripted',
  content,
  stopReason,
  usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
});

const toolUses = (content: ContentBlock[]) => content.filter((b) => b.type === 'tool_use');

test('each stop reason leads to the outcome the loop documents, whatever the content', () => {
  const expected: Record<string, string> = {
    end_turn: 'final',
    stop_sequence: 'final',
    null: 'final',
    refusal: 'refused',
    max_tokens: 'truncated',
    pause_turn: 'paused',
    model_context_window_exceeded: 'context_exceeded',
  };
  fc.assert(
    fc.property(fc.constantFrom(...STOP_REASONS), fc.array(block, { maxLength: 6 }), (stop, content) => {
      const outcome = classifyTurn(response(stop, content));
      if (stop === 'tool_use') {
        expect(outcome.kind).toBe(toolUses(content).length > 0 ? 'tools' : 'final');
      } else {
        expect(outcome.kind).toBe(expected[String(stop)]);
      }
    }),
  );
});

test('tool calls run only from a tool_use turn, all of them in order; a truncated turn keeps them to answer with errors', () => {
  fc.assert(
    fc.property(fc.constantFrom(...STOP_REASONS), fc.array(block, { maxLength: 6 }), (stop, content) => {
      const outcome = classifyTurn(response(stop, content));
      if (outcome.kind === 'tools' || outcome.kind === 'truncated') expect(outcome.toolUses).toEqual(toolUses(content));
      if (outcome.kind === 'tools') expect(stop).toBe('tool_use');
    }),
  );
});

test('the answer text keeps its whitespace (a cut answer and its continuation join exactly); a refusal is trimmed', () => {
  const content: ContentBlock[] = [{ type: 'text', text: '  part one ' }];
  expect(classifyTurn(response('end_turn', content))).toEqual({ kind: 'final', text: '  part one ' });
  expect(classifyTurn(response('max_tokens', content))).toEqual({
    kind: 'truncated',
    toolUses: [],
    text: '  part one ',
  });
  expect(classifyTurn(response('refusal', content))).toEqual({ kind: 'refused', text: 'part one' });
});

test('an unknown stop reason runs the turn’s tool calls (or ends with its text, or says why it stopped)', () => {
  const call: ContentBlock = { type: 'tool_use', id: 't1', name: 'bash', input: {} };
  const odd = (content: ContentBlock[]) => response('brand_new_reason' as StopReason, content);
  expect(classifyTurn(odd([call]))).toEqual({ kind: 'tools', toolUses: [call], unexpectedStop: 'brand_new_reason' });
  // Runs recorded before that read it as the answer.
  expect(classifyTurn(odd([call]), false)).toEqual({ kind: 'final', text: '(stopped: brand_new_reason)' });
  expect(classifyTurn(odd([{ type: 'text', text: ' done ' }]))).toEqual({ kind: 'final', text: 'done' });
});

test('tool calls at a quiet stop are found only for stop_sequence or no stop reason', () => {
  fc.assert(
    fc.property(fc.constantFrom(...STOP_REASONS), fc.array(block, { maxLength: 6 }), (stop, content) => {
      const quiet = stop === 'stop_sequence' || stop === null;
      expect(toolCallsAtQuietStop(response(stop, content))).toEqual(quiet ? toolUses(content) : []);
    }),
  );
});
