/**
 * Which of the run's messages history already holds (src/workflows/run/conversation.ts): the run's
 * end records the rest with `keepFinalMessages`, so `transcript` has the whole conversation. Pure: no server.
 */
import type { Message } from '../../src/shared';
import { Conversation } from '../../src/workflows/run/conversation';

const user = (text: string): Message => ({ role: 'user', content: text });
const assistant = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

function conversationOf(...messages: Message[]): Conversation {
  const c = new Conversation({ id: 'wf/run' });
  for (const m of messages) c.append(m);
  return c;
}

test('a model call records what it was sent: nothing is left once the answer is appended', () => {
  const c = conversationOf(user('task'));
  expect(c.allRecorded).toBe(false);
  c.append(assistant('done'));
  c.markSynced();
  expect(c.hasUnsynced).toBe(false);
  expect(c.allRecorded).toBe(true);
});

test('the last tool results after a closing summary that was sent them are recorded by its input', () => {
  const c = conversationOf(user('task'), assistant('calling a tool'));
  c.markSynced();
  c.append(user('the tool result'));
  expect(c.hasUnsynced).toBe(true);
  expect(c.allRecorded).toBe(false);
  c.markRecorded(c.length);
  // Not sent to a model call that answered (the cache is unchanged), but in history all the same.
  expect(c.hasUnsynced).toBe(true);
  expect(c.allRecorded).toBe(true);
});

test('a message added or replaced after the summary is not recorded', () => {
  const c = conversationOf(user('task'), assistant('calling a tool'), user('result'));
  c.markRecorded(c.length);
  c.append(assistant('a later answer'));
  expect(c.allRecorded).toBe(false);

  const replaced = conversationOf(user('task'), assistant('calling a tool'), user('result'));
  replaced.markRecorded(replaced.length);
  replaced.replaceLast(user('result, with a hook note'));
  expect(replaced.allRecorded).toBe(false);
  // The summary's input still holds everything before the replaced message.
  replaced.markRecorded(2);
  expect(replaced.allRecorded).toBe(false);
  replaced.markRecorded(3);
  expect(replaced.allRecorded).toBe(true);
});

test('a summary of a longer conversation than this one, or a compaction, records nothing', () => {
  const c = conversationOf(user('task'));
  c.markRecorded(5);
  expect(c.allRecorded).toBe(false);
  c.markRecorded(1);
  expect(c.allRecorded).toBe(true);
  c.replace([user('summary of the earlier turns'), user('next')]);
  expect(c.allRecorded).toBe(false);
});
