/**
 * The worker's conversation cache (src/activities/conversation-cache.ts): a delta call gets the
 * system prompt kept with its conversation only when the hash the workflow sent matches it, and a
 * tool result sent by reference only when the worker holds the content the workflow recorded; the
 * cache counts the bytes it keeps. Pure: no server.
 */
import { ConversationCache } from '../../src/activities/conversation-cache';
import {
  CACHE_MISS_ERROR_TYPE,
  ROOT_HASH,
  UNHASHED,
  chainHash,
  hashString,
  type ConversationDelta,
} from '../../src/shared';
import type { Message } from '../../src/shared/messages';

const SYSTEM = 'You are a careful agent.\n'.repeat(40);
const user: Message = { role: 'user', content: 'hello' };
const assistant: Message = { role: 'assistant', content: [{ type: 'text', text: 'hi' }] };

function fullLoad(id: string): ConversationDelta {
  return { id, baseLength: 0, baseHash: ROOT_HASH, delta: [user], headHash: chainHash(ROOT_HASH, user), full: true };
}

/** The call after `base` messages ending at `baseHash`: one new message. */
function deltaOf(id: string, baseLength: number, baseHash: string, next: Message): ConversationDelta {
  return { id, baseLength, baseHash, delta: [next], headHash: chainHash(baseHash, next), full: false };
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
  const delta = deltaOf('run-1', 2, head, next);
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

test('a tool result by reference resolves only to the content the workflow recorded', () => {
  const cache = new ConversationCache();
  const first = fullLoad('run-1');
  cache.commit('run-1', cache.materialize(first), first.headHash, assistant);
  const base = chainHash(first.headHash, assistant);
  const resultOf = (content: string): Message => ({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }],
  });
  // The workflow recorded `file text`: the chain it sends ends at that content's hash.
  const ref: ConversationDelta = {
    id: 'run-1',
    baseLength: 2,
    baseHash: base,
    delta: [
      {
        role: 'user',
        content: [{ type: 'tool_result_ref', tool_use_id: 'toolu_1', content_hash: hashString('file text') }],
      },
    ],
    headHash: chainHash(base, resultOf('file text')),
    full: false,
  };
  expect(missOf(() => cache.materialize(ref))).toBe(CACHE_MISS_ERROR_TYPE);
  // This worker holds another result for the call (an attempt the workflow did not record, say).
  cache.putToolResult('run-1', 'toolu_1', { content: 'stale text', isError: false });
  expect(missOf(() => cache.materialize(ref))).toBe(CACHE_MISS_ERROR_TYPE);
  cache.putToolResult('run-1', 'toolu_1', { content: 'file text', isError: false });
  expect(cache.materialize(ref)).toEqual([user, assistant, resultOf('file text')]);
});

test('the cache counts the JSON of the messages it keeps, and the system prompt once', () => {
  const cache = new ConversationCache();
  const json = (messages: Message[]) => messages.reduce((n, m) => n + JSON.stringify(m).length, 0);
  const first = fullLoad('run-1');
  const loaded = cache.materialize(first);
  cache.commit('run-1', loaded, first.headHash, assistant, SYSTEM);
  expect(cache.snapshot().bytes).toBe(json([user, assistant]) + SYSTEM.length);

  // A delta call: the new messages are added to the count, not the whole conversation again.
  const head = chainHash(first.headHash, assistant);
  const next: Message = { role: 'user', content: 'more text, longer than the first message' };
  const delta = deltaOf('run-1', 2, head, next);
  const second: Message = { role: 'assistant', content: [{ type: 'text', text: 'a second answer' }] };
  cache.commit('run-1', cache.materialize(delta), delta.headHash, second);
  expect(cache.snapshot().bytes).toBe(json([user, assistant, next, second]) + SYSTEM.length);

  // A full reload of a conversation the cache holds counts it once, not twice.
  const reload: ConversationDelta = {
    id: 'run-1',
    baseLength: 0,
    baseHash: ROOT_HASH,
    delta: [user, assistant, next, second, next],
    headHash: [user, assistant, next, second, next].reduce((h, m) => chainHash(h, m), ROOT_HASH),
    full: true,
  };
  cache.commit('run-1', cache.materialize(reload), reload.headHash, assistant);
  expect(cache.snapshot().bytes).toBe(json([user, assistant, next, second, next, assistant]) + SYSTEM.length);
});

test('a chain link is the hash of the previous value, a bar and the message, as recorded histories have it', () => {
  // The chain's form and pinned values: recorded histories and running workers hold chains made so,
  // and a change to how it is computed must keep them.
  const messages: Message[] = [
    user,
    assistant,
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'naïve 😀 text\n\u0000' }] },
  ];
  let previous = ROOT_HASH;
  for (const message of messages) {
    const next = chainHash(previous, message);
    expect(next).toBe(hashString(`${previous}|${JSON.stringify(message)}`));
    previous = next;
  }
  expect(hashString('')).toBe('wvjl67o803');
  expect(chainHash(ROOT_HASH, user)).toBe('blofm10hyn');
  expect(hashString('hello')).toBe(hashString('hello', 0));
  expect(hashString('hello', 1)).not.toBe(hashString('hello'));
});

test('a call built while the workflow was flagged as replaying (no hashes): a full load is served, a delta misses', () => {
  // Seen under load: a rebuilt run's first model call was scheduled from an activation the SDK
  // flagged as replaying, so it reached the worker with UNHASHED; checked, it failed the run.
  const cache = new ConversationCache();
  const unhashed = { ...fullLoad('c'), headHash: UNHASHED };
  expect(cache.materialize(unhashed)).toEqual([user]);
  // Cached under the real chain value, so the workflow's next (hashed) delta fits.
  cache.commit('c', [user], UNHASHED, assistant);
  const afterAssistant = chainHash(chainHash(ROOT_HASH, user), assistant);
  const next: Message = { role: 'user', content: 'next' };
  expect(cache.materialize(deltaOf('c', 2, afterAssistant, next))).toEqual([user, assistant, next]);
  // A delta cannot be checked without its base's hash: a miss, and the workflow resends in full.
  expect(missOf(() => cache.materialize({ ...deltaOf('c', 2, afterAssistant, next), baseHash: UNHASHED }))).toBe(
    CACHE_MISS_ERROR_TYPE,
  );
  // A wrong hash on a full load is still a miss.
  expect(missOf(() => cache.materialize({ ...fullLoad('d'), headHash: 'wrong' }))).toBe(CACHE_MISS_ERROR_TYPE);
});
