import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import type { ConversationDelta, WireBlock } from '../shared/conversation';
import type { ContentBlock, Message } from '../shared/messages';
import {
  CACHE_MISS_ERROR_TYPE,
  ROOT_HASH,
  UNHASHED,
  chainHash,
  hashString,
  toolResultBlock,
} from '../shared/conversation';

interface CachedConversation {
  messages: Message[];
  hash: string;
  /** The run's system prompt, kept with its conversation so calls after a full load need not send it. */
  system?: string;
  /** Its hash, computed once when it was kept: every delta call compares against it. */
  systemHash?: string;
  /** Approximate size (JSON characters), for the memory bound. */
  bytes: number;
}

interface CachedToolResult {
  content: string;
  isError: boolean;
}

export interface ConversationCacheOptions {
  /** Conversations kept (least recently used dropped first). */
  maxConversations?: number;
  /** Total approximate bytes kept across conversations and tool results. */
  maxBytes?: number;
}

export interface ConversationCacheStats {
  hits: number;
  misses: number;
  fullLoads: number;
  conversations: number;
  bytes: number;
}

/**
 * The worker's copy of each run's conversation, so model activities receive only what was added
 * since the previous call. Bounded (LRU by count and bytes). A miss is not an error in the run:
 * the activity fails fast with a typed, non-retryable failure and the workflow resends the whole
 * conversation once, so eviction, restarts and other workers cost one larger call, never a run.
 */
export class ConversationCache {
  private readonly conversations = new Map<string, CachedConversation>();
  private readonly toolResults = new Map<string, CachedToolResult>();
  private readonly resolvedKeys = new Map<string, string[]>();
  /** The JSON length of each message `materialize` added (from index `from`): `commit` counts them without a second stringify. */
  private readonly measured = new WeakMap<Message[], { from: number; lengths: number[] }>();
  private bytes = 0;
  private readonly maxConversations: number;
  private readonly maxBytes: number;
  readonly stats: Omit<ConversationCacheStats, 'conversations' | 'bytes'> = { hits: 0, misses: 0, fullLoads: 0 };

  constructor(options: ConversationCacheOptions = {}) {
    this.maxConversations = options.maxConversations ?? 1000;
    this.maxBytes = options.maxBytes ?? 512 * 1024 * 1024;
  }

  snapshot(): ConversationCacheStats {
    return { ...this.stats, conversations: this.conversations.size, bytes: this.bytes };
  }

  /** Rebuilds the full conversation from the delta, or throws the typed cache-miss failure. */
  materialize(ref: ConversationDelta): Message[] {
    let base: Message[];
    if (ref.full) {
      if (ref.baseLength !== 0) throw miss(ref, 'a full load must start from an empty conversation');
      base = [];
      this.stats.fullLoads++;
    } else {
      const cached = this.conversations.get(ref.id);
      if (!cached) throw miss(ref, 'this worker holds no copy of the conversation');
      if (cached.messages.length !== ref.baseLength || cached.hash !== ref.baseHash) {
        throw miss(
          ref,
          `this worker's copy has ${cached.messages.length} messages, the delta starts at ${ref.baseLength}`,
        );
      }
      base = cached.messages;
      this.stats.hits++;
      this.touch(ref.id, cached);
    }
    let hash = ref.full ? ROOT_HASH : ref.baseHash;
    const messages = base.slice();
    const lengths: number[] = [];
    for (const wire of ref.delta) {
      const message = this.resolveMessage(ref, wire);
      const json = JSON.stringify(message);
      hash = chainHash(hash, message, json);
      lengths.push(json.length);
      messages.push(message);
    }
    // A full load the workflow built while flagged as replaying carries no hash (see UNHASHED): its
    // messages came inline, so there is nothing to check them against.
    if (hash !== ref.headHash && !(ref.full && ref.headHash === UNHASHED)) {
      throw miss(ref, 'the rebuilt conversation does not match the workflow’s');
    }
    this.measured.set(messages, { from: base.length, lengths });
    return messages;
  }

  /**
   * The system prompt of a call. Calls recorded before 'run-context' send it every time (no hash).
   * Newer runs send it with full loads only, and its hash always: a delta call uses the copy kept
   * with the conversation, or misses (and the workflow resends conversation and system once).
   */
  system(ref: ConversationDelta, sent: string | undefined, hash: string | undefined): string | undefined {
    if (hash === undefined) return sent;
    if (sent !== undefined) {
      if (hashString(sent) !== hash) throw miss(ref, 'the system prompt does not match its hash');
      return sent;
    }
    const cached = this.conversations.get(ref.id);
    if (cached?.system === undefined || cached.systemHash !== hash)
      throw miss(ref, 'this worker holds no copy of the system prompt');
    return cached.system;
  }

  /** Records the conversation as the model saw it plus the assistant turn it returned. */
  commit(id: string, messages: Message[], headHash: string, assistant: Message, system?: string): void {
    const previous = this.conversations.get(id);
    const json = JSON.stringify(assistant);
    const kept = system ?? previous?.system;
    const added =
      json.length +
      estimateAdded(previous, messages, this.measured.get(messages)) +
      (previous?.system ? 0 : (kept?.length ?? 0));
    // An unhashed full load (see UNHASHED) is hashed here, so the next delta, hashed, fits.
    const head = headHash === UNHASHED ? messages.reduce((hash, m) => chainHash(hash, m), ROOT_HASH) : headHash;
    const entry: CachedConversation = {
      messages: [...messages, assistant],
      hash: chainHash(head, assistant, json),
      bytes: (previous && messages.length >= previous.messages.length ? previous.bytes : 0) + added,
      ...(kept !== undefined
        ? { system: kept, systemHash: kept === previous?.system ? previous.systemHash : hashString(kept) }
        : {}),
    };
    if (previous) this.bytes -= previous.bytes;
    for (const key of this.resolvedKeys.get(id) ?? []) {
      const result = this.toolResults.get(key);
      if (result) this.bytes -= result.content.length;
      this.toolResults.delete(key);
    }
    this.resolvedKeys.delete(id);
    this.conversations.delete(id);
    this.conversations.set(id, entry);
    this.bytes += entry.bytes;
    this.evict();
  }

  /** Keeps a tool's result so the next model call can send it by reference. */
  putToolResult(conversationId: string, toolUseId: string, result: CachedToolResult): void {
    const key = toolKey(conversationId, toolUseId);
    const old = this.toolResults.get(key);
    if (old) this.bytes -= old.content.length;
    this.toolResults.set(key, result);
    this.bytes += result.content.length;
    this.evict();
  }

  private resolveMessage(ref: ConversationDelta, wire: { role: Message['role']; content: string | WireBlock[] }) {
    if (typeof wire.content === 'string') return wire as Message;
    let resolved: ContentBlock[] | undefined;
    wire.content.forEach((block, i) => {
      if (block.type !== 'tool_result_ref') return;
      const r = block as Extract<WireBlock, { type: 'tool_result_ref' }>;
      const key = toolKey(ref.id, r.tool_use_id);
      const cached = this.toolResults.get(key);
      // A result this worker holds that differs from the one the workflow recorded (an attempt the
      // workflow did not keep, say) is not checked against `content_hash` here: the chain hash over
      // the resolved message, compared with the workflow's after the loop, tells them apart.
      if (!cached) throw miss(ref, `this worker holds no result for tool call ${r.tool_use_id}`);
      resolved ??= wire.content.slice() as ContentBlock[];
      resolved[i] = toolResultBlock(r.tool_use_id, cached.content, r.is_error === true);
      // Released at commit, once the result lives in the cached conversation; a retried call
      // (after a 429, say) still finds it here.
      this.resolvedKeys.set(ref.id, [...(this.resolvedKeys.get(ref.id) ?? []), key]);
    });
    return { role: wire.role, content: resolved ?? (wire.content as ContentBlock[]) } satisfies Message;
  }

  private touch(id: string, entry: CachedConversation): void {
    this.conversations.delete(id);
    this.conversations.set(id, entry);
  }

  private evict(): void {
    while (
      (this.conversations.size > this.maxConversations || this.bytes > this.maxBytes) &&
      this.conversations.size > 0
    ) {
      const [oldestId, oldest] = this.conversations.entries().next().value as [string, CachedConversation];
      this.conversations.delete(oldestId);
      this.bytes -= oldest.bytes;
    }
    while (this.bytes > this.maxBytes && this.toolResults.size > 0) {
      const [key, value] = this.toolResults.entries().next().value as [string, CachedToolResult];
      this.toolResults.delete(key);
      this.bytes -= value.content.length;
    }
  }
}

function toolKey(conversationId: string, toolUseId: string): string {
  return `${conversationId}\u0000${toolUseId}`;
}

/** Bytes the new messages add over the cached prefix (or all of them after a reload); `measured`: lengths known from `materialize`. */
function estimateAdded(
  previous: CachedConversation | undefined,
  messages: Message[],
  measured: { from: number; lengths: number[] } | undefined,
): number {
  const from = previous && messages.length >= previous.messages.length ? previous.messages.length : 0;
  let bytes = 0;
  for (let i = from; i < messages.length; i++) {
    const known = measured && i >= measured.from ? measured.lengths[i - measured.from] : undefined;
    bytes += known ?? JSON.stringify(messages[i]).length;
  }
  return bytes;
}

function miss(ref: ConversationDelta, why: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: CACHE_MISS_ERROR_TYPE,
    message: `conversation ${ref.id} not in this worker's cache: ${why}; the workflow will resend it in full`,
    nonRetryable: true,
    // Expected and handled (the workflow resends): logged at DEBUG, not as a failed activity.
    category: ApplicationFailureCategory.BENIGN,
  });
}
