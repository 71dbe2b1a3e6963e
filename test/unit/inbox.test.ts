/**
 * Messages sent to a running run (src/workflows/run/inbox.ts): the validator accepts only
 * `{message: string}` within the bounds and says what it accepts; taken messages reach the model in
 * one user turn. Pure: no server.
 */
import fc from 'fast-check';
import { MAX_MESSAGE_BYTES, MAX_PENDING_MESSAGE_BYTES, utf8Length } from '../../src/shared';
import { Conversation } from '../../src/workflows/run/conversation';
import { Inbox } from '../../src/workflows/run/inbox';

test('any value other than {message: non-empty string} is refused with a message naming the accepted shape', () => {
  fc.assert(
    fc.property(fc.anything(), (raw) => {
      const inbox = new Inbox();
      const ok =
        typeof raw === 'object' &&
        raw !== null &&
        !Array.isArray(raw) &&
        Object.keys(raw).length === 1 &&
        typeof (raw as { message?: unknown }).message === 'string' &&
        (raw as { message: string }).message.trim() !== '';
      if (ok) expect(() => inbox.validate(raw, undefined)).not.toThrow();
      else expect(() => inbox.validate(raw, undefined)).toThrow('{"message": string}');
    }),
  );
});

test('a run that has ended refuses messages, naming how it ended', () => {
  expect(() => new Inbox().validate({ message: 'hi' }, 'completed')).toThrow("the run has ended ('completed')");
});

test('one message is bounded, and so is what waits in all', () => {
  const inbox = new Inbox();
  expect(() => inbox.validate({ message: 'é'.repeat(MAX_MESSAGE_BYTES / 2 + 1) }, undefined)).toThrow(
    `the limit is ${MAX_MESSAGE_BYTES} bytes`,
  );
  const big = 'x'.repeat(MAX_MESSAGE_BYTES);
  let waiting = 0;
  for (;;) {
    try {
      inbox.validate({ message: big }, undefined);
    } catch (e) {
      expect((e as Error).message).toContain(`${MAX_PENDING_MESSAGE_BYTES}-byte limit`);
      break;
    }
    inbox.accept({ message: big });
    waiting += utf8Length(big);
  }
  expect(waiting).toBeLessThanOrEqual(MAX_PENDING_MESSAGE_BYTES);
  expect(waiting + utf8Length(big)).toBeGreaterThan(MAX_PENDING_MESSAGE_BYTES);
  // Taking them frees the room again.
  inbox.take();
  expect(() => inbox.validate({ message: big }, undefined)).not.toThrow();
});

test('waiting messages reach the model in one user turn, in order, and the inbox is then empty', () => {
  const inbox = new Inbox(['carried over']);
  inbox.accept({ message: 'first' });
  inbox.accept({ message: 'second' });
  expect(inbox.count).toBe(3);
  const conversation = new Conversation({ id: 'c', messages: [{ role: 'user', content: 'task' }] });
  conversation.append({ role: 'assistant', content: [{ type: 'text', text: 'working' }] });
  inbox.takeInto(conversation);
  expect(conversation.last).toEqual({ role: 'user', content: 'carried over\n\nfirst\n\nsecond' });
  expect(inbox.count).toBe(0);
  expect(inbox.take()).toBeUndefined();
});
