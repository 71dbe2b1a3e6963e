import { CancellationScope, log, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { agentActivities } from './activity-proxy';
import type { Conversation } from '../run/conversation';

/**
 * At a run's end, the messages no model call sent (the last turn's tool results after `done`, an
 * interrupt or the budget; a correction or a Stop hook's message) are recorded in history by a
 * local activity that returns them: `transcript` and `result --messages` then have the whole
 * conversation, with no worker up.
 */
export async function keepFinalMessages(conversation: Conversation): Promise<void> {
  const tail = conversation.unsynced;
  if (tail.messages.length === 0) return;
  const { keepFinalMessages: keep } = agentActivities(
    proxyLocalActivities<Pick<Activities, 'keepFinalMessages'>>({
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '1 second', maximumAttempts: 3 },
    }),
  );
  // Best effort, and not cut short by a cancel that arrives now: the run's end does not depend on it.
  try {
    await CancellationScope.nonCancellable(() => keep.executeWithOptions({ summary: 'final messages' }, [tail]));
  } catch (err) {
    log.warn('could not record the final messages; the transcript lacks them', {
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
