import { utf8Length } from '../../shared/bounds';
import { MAX_MESSAGE_BYTES, MAX_PENDING_MESSAGE_BYTES } from '../../shared/constants';
import type { ContentBlock } from '../../shared/messages';
import type { ExitReason } from '../../shared/run';
import { objectWithKeys } from './validation';
import type { Conversation } from './conversation';

const ACCEPTED = '{"message": string}';

/**
 * User messages sent to a running run (`sendMessage`), waiting for the next iteration boundary.
 * Each message and their total are bounded, so what the run carries into a continue-as-new and
 * the model call that takes them stay inside Temporal's payload limits however many arrive.
 */
export class Inbox {
  private readonly messages: string[];
  private bytes: number;

  constructor(carried: readonly string[] = []) {
    this.messages = carried.slice();
    this.bytes = carried.reduce((sum, m) => sum + utf8Length(m), 0);
  }

  get count(): number {
    return this.messages.length;
  }

  list(): string[] {
    return this.messages.slice();
  }

  /** The update validator. `ended`: the run's exit reason once it has one. */
  validate(raw: unknown, ended: ExitReason | undefined): void {
    if (ended) throw new Error(`the run has ended ('${ended}'); start a new run to continue`);
    const update = objectWithKeys(raw, ['message'], ACCEPTED);
    if (typeof update.message !== 'string' || !update.message.trim()) {
      throw new Error(`message must be a non-empty string; accepted: ${ACCEPTED}`);
    }
    const size = utf8Length(update.message);
    if (size > MAX_MESSAGE_BYTES) {
      throw new Error(
        `message is ${size} bytes; the limit is ${MAX_MESSAGE_BYTES} bytes (${MAX_MESSAGE_BYTES / 1024} KiB)`,
      );
    }
    if (this.bytes + size > MAX_PENDING_MESSAGE_BYTES) {
      throw new Error(
        `${this.messages.length} message(s) (${this.bytes} bytes) already wait for the run's next iteration and ` +
          `this one would pass the ${MAX_PENDING_MESSAGE_BYTES}-byte limit; send it after the run takes them`,
      );
    }
  }

  /** The update handler, after `validate` accepted the input. */
  accept(raw: unknown): string {
    const message = (raw as { message: string }).message;
    this.messages.push(message);
    this.bytes += utf8Length(message);
    return message;
  }

  /** Gives the waiting messages to the model at this iteration boundary, in one user turn. */
  takeInto(conversation: Conversation): void {
    const text = this.take();
    if (text !== undefined) Inbox.putInto(conversation, text);
  }

  /** The waiting messages, joined, and the inbox emptied; undefined when none wait. */
  take(): string | undefined {
    if (this.messages.length === 0) return undefined;
    const text = this.messages.splice(0).join('\n\n');
    this.bytes = 0;
    return text;
  }

  /** Adds a user text to the conversation as its own turn or joined to a trailing user turn. */
  static putInto(conversation: Conversation, text: string): void {
    const last = conversation.last;
    if (last?.role === 'user' && conversation.canReplaceLast) {
      // Joining the trailing user turn (tool results) keeps the roles alternating.
      const blocks: ContentBlock[] =
        typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
      conversation.replaceLast({ role: 'user', content: [...blocks, { type: 'text', text }] });
    } else {
      conversation.append({ role: 'user', content: text });
    }
  }
}
