/**
 * The worker's conversation cache (src/activities/conversation-cache.ts): a delta call gets the
 * system prompt kept with its conversation only when the hash the workflow sent matches it, and a
 * tool result sent by reference only when the worker holds that exact content. Pure: no server.
 */
import { ConversationCache } from '../../src/activities/conversation-cache';
import { CACHE_MISS_ERROR_TYPE, ROOT_HASH, chainHash, hashString, type ConversationDelta } from '../../src/shared';
import type { Message } from '../../src/shared/messages';

const SYSTEM = 'You are a careful agent.\n'.repeat(40);
const user: Message = { role: 'user', content: 'hello' };
const assistant: Message = { role: 'assistant', content: [{ type: 'text', text: 'hi' }] };

function fullLoad(id: string): ConversationDelta {
  return { id, baseLength: 0, baseHash: ROOT_HASH, delta: [user], headHash: chainHash(ROOT_HASH, user), full: true };
}

function missOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return (err as { type?: string }).type;
  }
}

test('a delta call gets the kept system prompt only when its hash matches; a full load may send it', () => {
  const cache = new ConversationCache();
  const first = fullLoad('run-1');
  expect(cache.system(first, SYSTEM, hashString(SYSTEM))).toBe(SYSTEM);
  expect(missOf(() => cache.system(first, SYSTEM, hashString('another prompt')))).toBe(CACHE_MISS_ERROR_TYPE);
  const messages = cache.materialize(first);
  cache.commit('run-1', messages, first.headHash, assistant, SYSTEM);

  const head = chainHash(first.headHash, assistant);
  const next: Message = { role: 'user', content: 'more' };
  const delta: ConversationDelta = {
    id: 'run-1',
    baseLength: 2,
    baseHash: head,
    delta: [next],
    headHash: chainHash(head, next),
    full: false,
  };
  expect(cache.materialize(delta)).toEqual([user, assistant, next]);
  expect(cache.system(delta, undefined, hashString(SYSTEM))).toBe(SYSTEM);
  expect(missOf(() => cache.system(delta, undefined, hashString(`${SYSTEM}!`)))).toBe(CACHE_MISS_ERROR_TYPE);
  expect(missOf(() => cache.system({ ...delta, id: 'run-2' }, undefined, hashString(SYSTEM)))).toBe(
    CACHE_MISS_ERROR_TYPE,
  );

  // A later commit without a system prompt keeps the one it had, and its hash.
  cache.commit('run-1', [user, assistant, next], delta.headHash, assistant);
  expect(cache.system(delta, undefined, hashString(SYSTEM))).toBe(SYSTEM);
  // Calls recorded before the hash existed send the prompt every time.
  expect(cache.system(delta, 'old prompt', undefined)).toBe('old prompt');

  // A commit with another prompt (a full load after compaction, say) keeps that one, with its own hash.
  const other = `${SYSTEM}(compacted)`;
  cache.commit('run-1', [user, assistant, next], delta.headHash, assistant, other);
  expect(cache.system(delta, undefined, hashString(other))).toBe(other);
  expect(missOf(() => cache.system(delta, undefined, hashString(SYSTEM)))).toBe(CACHE_MISS_ERROR_TYPE);
});

test('a tool result by reference resolves only to the content the worker holds', () => {
  const cache = new ConversationCache();
  const first = fullLoad('run-1');
  cache.commit('run-1', cache.materialize(first), first.headHash, assistant);
  cache.putToolResult('run-1', 'toolu_1', { content: 'file text', isError: false });
  const base = chainHash(first.headHash, assistant);
  const resolved: Message = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file text' }],
  };
  const ref = (hash: string): ConversationDelta => ({
    id: 'run-1',
    baseLength: 2,
    baseHash: base,
    delta: [{ role: 'user', content: [{ type: 'tool_result_ref', tool_use_id: 'toolu_1', content_hash: hash }] }],
    headHash: chainHash(base, resolved),
    full: false,
  });
  expect(missOf(() => cache.materialize(ref(hashString('other text'))))).toBe(CACHE_MISS_ERROR_TYPE);
  expect(cache.materialize(ref(hashString('file text')))).toEqual([user, assistant, resolved]);
});
