import { utf8Length } from '../../src/shared';
import { Conversation } from '../../src/workflows/run/conversation';

/** The conversation's size is what its payloads weigh: UTF-8 bytes of its JSON. */
test('a conversation of non-ASCII text is measured in UTF-8 bytes, so the caps hold for any language', () => {
  const text = '漢字'.repeat(1000); // 2,000 UTF-16 units, 6,000 UTF-8 bytes
  const conversation = new Conversation({ id: 'c', messages: [{ role: 'user', content: text }] });
  expect(conversation.bytes).toBe(utf8Length(JSON.stringify({ role: 'user', content: text })));
  expect(conversation.bytes).toBeGreaterThan(6000);

  conversation.append({ role: 'assistant', content: [{ type: 'text', text: 'ok' }] });
  conversation.append({ role: 'user', content: 'é' });
  const before = conversation.bytes;
  conversation.replaceLast({ role: 'user', content: 'éé' });
  expect(conversation.bytes).toBe(before + 2);
});
