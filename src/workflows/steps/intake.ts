import { cutChars } from '../../shared/bounds';
import { Inbox } from '../run/inbox';
import type { Run } from '../run/run';

/*
 * What users say reaches the model through here: the prompt at run start and the messages sent
 * while the run goes on, each screened by the UserPromptSubmit hooks when there are any (a hook
 * may block it, or add context the model sees with it).
 */

/** The run's prompt, already the conversation's first message: undefined, or why a hook blocked it. */
export async function screenPrompt(run: Run, prompt: string): Promise<string | undefined> {
  const { hooks, state } = run;
  const conversation = state.conversation;
  if (!hooks.has('UserPromptSubmit')) return undefined;
  const verdict = await hooks.promptSubmitted(prompt);
  if (verdict.blocked !== undefined) return verdict.blocked;
  if (verdict.context && conversation.length === 1 && conversation.canReplaceLast) {
    conversation.replaceLast({ role: 'user', content: withContext(prompt, verdict.context) });
  }
  return undefined;
}

/**
 * Gives the waiting messages to the model. `blocked`: a hook refused them and the conversation
 * still ends with the model's answer, so there is nothing to call the model with.
 */
export async function takeMessages(run: Run): Promise<'taken' | 'blocked' | 'none'> {
  const { hooks, state } = run;
  const { inbox, conversation } = state;
  if (!hooks.has('UserPromptSubmit')) {
    if (inbox.count === 0) return 'none';
    inbox.takeInto(conversation);
    return 'taken';
  }
  const text = inbox.take();
  if (text === undefined) return 'none';
  const verdict = await hooks.promptSubmitted(text);
  if (verdict.blocked !== undefined) {
    run.emit({
      kind: 'notice',
      message: `a UserPromptSubmit hook blocked a message: ${cutChars(verdict.blocked, 500)}`,
    });
    return conversation.last?.role === 'assistant' ? 'blocked' : 'none';
  }
  Inbox.putInto(conversation, verdict.context ? withContext(text, verdict.context) : text);
  return 'taken';
}

function withContext(text: string, context: string): string {
  return `${text}\n\n[hook context] ${context}`;
}
