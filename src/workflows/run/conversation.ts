import type { ConversationDelta, ConversationSnapshot, WireBlock, WireMessage } from '../../shared/conversation';
import type { ContentBlock, Message } from '../../shared/messages';
import { utf8Length } from '../../shared/bounds';
import { ROOT_HASH, UNHASHED, chainHash, hashString } from '../../shared/conversation';

/**
 * The run's conversation as the workflow keeps it (rebuilt on replay from activity results) and
 * the bookkeeping that lets model calls carry only what changed since the previous call.
 */
export class Conversation {
  readonly id: string;
  private messages: Message[] = [];
  /**
   * chain[i] is the hash after the first i messages, computed lazily up to what a delta needs: a
   * replay never sends a delta, so it never hashes (it was a quarter of a long run's replay time).
   */
  private chain: string[] = [ROOT_HASH];
  private syncedLength = 0;
  /** The first this many messages are in history, in the input of a closing summary that completed. */
  private recordedLength = 0;
  /** UTF-8 size of each message's JSON. */
  private sizes: number[] = [];
  /** JSON size of the whole conversation, for the payload limits it must stay under. */
  private jsonBytes = 0;
  private readonly cachedToolResults = new Set<string>();

  /** Sizes are UTF-8 bytes of each message's JSON, as Temporal counts payloads. */
  constructor(
    snapshot: Pick<ConversationSnapshot, 'id'> & Partial<ConversationSnapshot>,
    /** True while the workflow replays history: activity inputs are rebuilt but never sent or compared. */
    private readonly replaying: () => boolean = () => false,
  ) {
    this.id = snapshot.id;
    for (const message of snapshot.messages ?? []) this.append(message);
    this.syncedLength = Math.min(snapshot.syncedLength ?? 0, this.messages.length);
    for (const id of snapshot.cachedToolResults ?? []) this.cachedToolResults.add(id);
  }

  get all(): readonly Message[] {
    return this.messages;
  }

  get length(): number {
    return this.messages.length;
  }

  get bytes(): number {
    return this.jsonBytes;
  }

  append(message: Message): void {
    const json = JSON.stringify(message);
    const size = utf8Length(json);
    this.messages.push(message);
    this.sizes.push(size);
    this.jsonBytes += size;
  }

  /** The chain value after the first `n` messages. */
  private hashAt(n: number): string {
    while (this.chain.length <= n) {
      const i = this.chain.length - 1;
      this.chain.push(chainHash(this.chain[i] ?? ROOT_HASH, this.messages[i]!));
    }
    return this.chain[n] ?? ROOT_HASH;
  }

  get last(): Message | undefined {
    return this.messages[this.messages.length - 1];
  }

  /** True when the last message has not reached a worker yet, so it may still change. */
  get canReplaceLast(): boolean {
    return this.hasUnsynced;
  }

  /** True when some messages have not reached a worker yet (`unsynced` is not empty). */
  get hasUnsynced(): boolean {
    return this.messages.length > this.syncedLength;
  }

  /** Replaces the last message, which must not have reached a worker yet (a trailing user turn). */
  replaceLast(message: Message): void {
    if (this.messages.length === 0 || this.messages.length <= this.syncedLength) {
      throw new Error('replaceLast: the last message was already sent to a worker');
    }
    this.messages.pop();
    this.recordedLength = Math.min(this.recordedLength, this.messages.length);
    this.jsonBytes -= this.sizes.pop() ?? 0;
    this.chain.length = Math.min(this.chain.length, this.messages.length + 1);
    this.append(message);
  }

  /** A `runTool` activity ran this call, so its worker holds the result for the next model call. */
  markToolResultCached(toolUseId: string): void {
    this.cachedToolResults.add(toolUseId);
  }

  /** The next call goes to a worker without the conversation: it travels whole, inline. */
  resendInFull(): void {
    this.syncedLength = 0;
    this.cachedToolResults.clear();
  }

  /** The result sent differs from what the worker cached (hook notes added): it travels inline. */
  forgetToolResult(toolUseId: string): void {
    this.cachedToolResults.delete(toolUseId);
  }

  /** The messages no model call has sent yet (at a run's end: the last turn's tool results, say), and where they start. */
  get unsynced(): { baseLength: number; messages: Message[] } {
    return { baseLength: this.syncedLength, messages: this.messages.slice(this.syncedLength) };
  }

  /**
   * A closing summary that was sent the first `length` messages completed: its input, recorded in
   * history, holds them (the transcript reads them from there), so no local activity has to record
   * them again at the run's end.
   */
  markRecorded(length: number): void {
    if (length <= this.messages.length) this.recordedLength = Math.max(this.recordedLength, length);
  }

  /** True when every message is in history: sent by a model call, or in a completed closing summary's input. */
  get allRecorded(): boolean {
    return this.messages.length <= Math.max(this.syncedLength, this.recordedLength);
  }

  /** The worker now holds everything, the assistant turn just appended included. */
  markSynced(): void {
    this.syncedLength = this.messages.length;
    this.cachedToolResults.clear();
  }

  /** Replaces the whole conversation (compaction); the next call sends it in full. */
  replace(messages: Message[]): void {
    this.messages = [];
    this.sizes = [];
    this.jsonBytes = 0;
    this.chain = [ROOT_HASH];
    this.syncedLength = 0;
    this.recordedLength = 0;
    this.cachedToolResults.clear();
    for (const message of messages) this.append(message);
  }

  /** The delta for the next model call, or the whole conversation inline with `full`. */
  delta(full: boolean): ConversationDelta {
    // Replayed inputs are discarded (Temporal matches commands by activity type and id, not input).
    const hash = (n: number) => (this.replaying() ? UNHASHED : this.hashAt(n));
    const head = hash(this.messages.length);
    if (full) {
      return { id: this.id, baseLength: 0, baseHash: ROOT_HASH, delta: this.messages.slice(), headHash: head, full };
    }
    return {
      id: this.id,
      baseLength: this.syncedLength,
      baseHash: hash(this.syncedLength),
      delta: this.messages.slice(this.syncedLength).map((m) => this.toWire(m)),
      headHash: head,
      full,
    };
  }

  /** True when the worker is believed to hold a prefix: a delta is worth trying. */
  get hasSyncedPrefix(): boolean {
    return this.syncedLength > 0;
  }

  snapshot(): ConversationSnapshot {
    return {
      id: this.id,
      messages: this.messages.slice(),
      syncedLength: this.syncedLength,
      cachedToolResults: [...this.cachedToolResults],
    };
  }

  private toWire(message: Message): WireMessage {
    if (typeof message.content === 'string') return message;
    if (!message.content.some((b) => b.type === 'tool_result' && this.cachedToolResults.has(toolUseIdOf(b)))) {
      return message;
    }
    return {
      role: message.role,
      content: message.content.map((block): WireBlock => {
        if (block.type !== 'tool_result' || !this.cachedToolResults.has(toolUseIdOf(block))) return block;
        const result = block as { tool_use_id: string; content: string; is_error?: boolean };
        return {
          type: 'tool_result_ref',
          tool_use_id: result.tool_use_id,
          ...(result.is_error ? { is_error: true } : {}),
          content_hash: this.replaying() ? UNHASHED : hashString(result.content),
        };
      }),
    };
  }
}

function toolUseIdOf(block: ContentBlock): string {
  return String((block as { tool_use_id?: unknown }).tool_use_id);
}
