import fc from 'fast-check';
import { compileMatcher, parseSettings } from '../../src/hooks';
import { OutcomeBuilder } from '../../src/hooks/merge';
import { commandVerdict, resultVerdict } from '../../src/hooks/verdict';
import { HOOK_EVENTS } from '../../src/shared/hooks-io';

// A hook's stdout, a function hook's return value and a settings file are input from outside:
// whatever they hold, reading them never throws, and a PreToolUse answer that is not clearly
// understood never lets the call through.
describe('hostile hook answers and settings', () => {
  const event = fc.constantFrom(...HOOK_EVENTS);
  const hookish = fc.oneof(
    fc.jsonValue(),
    fc.record(
      {
        decision: fc.oneof(fc.constantFrom('block', 'approve', 'allow'), fc.jsonValue()),
        reason: fc.oneof(fc.string(), fc.jsonValue()),
        continue: fc.oneof(fc.boolean(), fc.jsonValue()),
        hookSpecificOutput: fc.oneof(
          fc.jsonValue(),
          fc.record(
            {
              permissionDecision: fc.oneof(fc.constantFrom('allow', 'deny', 'ask', 'defer'), fc.jsonValue()),
              permissionDecisionReason: fc.oneof(fc.string(), fc.jsonValue()),
              updatedInput: fc.jsonValue(),
              additionalContext: fc.oneof(fc.string(), fc.jsonValue()),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: [] },
    ),
  );

  test('any answer gives a plain-JSON outcome; PreToolUse allows only on a well-formed allow', () => {
    fc.assert(
      fc.property(event, hookish, (name, answer) => {
        const builder = new OutcomeBuilder(name);
        builder.addTier([resultVerdict(name, 'worker', 'h', answer)]);
        const outcome = builder.build();
        expect(JSON.parse(JSON.stringify(outcome))).toEqual(outcome);
        if (name !== 'PreToolUse' || outcome.decision !== 'allow') return;
        const specific = (answer as { hookSpecificOutput?: { permissionDecision?: unknown } }).hookSpecificOutput;
        const legacy = (answer as { decision?: unknown }).decision;
        expect(specific?.permissionDecision === 'allow' || legacy === 'approve').toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  test('any stdout and exit code is read without throwing; a failed PreToolUse hook denies', () => {
    fc.assert(
      fc.property(
        event,
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
        ),
        fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 255 })),
        (name, stdout, code) => {
          const verdict = commandVerdict(name, 'worker', 'h', { code, stdout, stderr: '' });
          if (name === 'PreToolUse' && code !== 0) expect(verdict.decision).toBe('deny');
        },
      ),
      { numRuns: 500 },
    );
  });

  test('any settings text is parsed or refused in words, never thrown', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify({ hooks: v })),
        ),
        (text) => {
          const loaded = parseSettings(text, 'workspace', 's.json');
          expect(loaded.invalid === undefined || loaded.invalid.length > 0).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  test('any matcher compiles or is refused with an Error, and matches in bounded time', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 200 }), (matcher, tool) => {
        let match: ((name: string) => boolean) | undefined;
        try {
          match = compileMatcher(matcher);
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
          return;
        }
        expect(typeof match(tool)).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });
});
