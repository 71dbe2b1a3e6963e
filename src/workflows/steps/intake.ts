import { cutChars, type RunEventInput } from '../../shared';
import type { Conversation } from '../run/conversation';
import type { Hooks } from '../calls/hooks';
import { Inbox } from '../run/inbox';

/**
 * What users say reaches the model through here: the prompt at run start and the messages sent
 * while the run goes on, each screened by the UserPromptSubmit hooks when there are any (a hook
 * may block it, or add context the model sees with it).
 */
export class Intake {
  constructor(
    private readonly inbox: Inbox,
    private readonly conversation: Conversation,
    private readonly hooks: Hooks,
    private readonly emit: (event: RunEventInput) => void,
  ) {}

  /** The run's prompt, already the conversation's first message: undefined, or why a hook blocked it. */
  async screenPrompt(prompt: string): Promise<string | undefined> {
    if (!this.hooks.has('UserPromptSubmit')) return undefined;
    const verdict = await this.hooks.promptSubmitted(prompt);
    if (verdict.blocked !== undefined) return verdict.blocked;
    if (verdict.context && this.conversation.length === 1 && this.conversation.canReplaceLast) {
      this.conversation.replaceLast({ role: 'user', content: withContext(prompt, verdict.context) });
    }
    return undefined;
  }

  /**
   * Gives the waiting messages to the model. `blocked`: a hook refused them and the conversation
   * still ends with the model's answer, so there is nothing to call the model with.
   */
  async takeMessages(): Promise<'taken' | 'blocked' | 'none'> {
    if (!this.hooks.has('UserPromptSubmit')) {
      if (this.inbox.count === 0) return 'none';
      this.inbox.takeInto(this.conversation);
      return 'taken';
    }
    const text = this.inbox.take();
    if (text === undefined) return 'none';
    const verdict = await this.hooks.promptSubmitted(text);
    if (verdict.blocked !== undefined) {
      this.emit({
        kind: 'notice',
        message: `a UserPromptSubmit hook blocked a message: ${cutChars(verdict.blocked, 500)}`,
      });
      return this.conversation.last?.role === 'assistant' ? 'blocked' : 'none';
    }
    Inbox.putInto(this.conversation, verdict.context ? withContext(text, verdict.context) : text);
    return 'taken';
  }
}

function withContext(text: string, context: string): string {
  return `${text}\n\n[hook context] ${context}`;
}
