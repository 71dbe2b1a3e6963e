import type { FinalMessages } from '../shared/activity-io';

/**
 * `keepFinalMessages`: returns its input, so that history records the messages the run added
 * after its last model call (a local activity's input is not recorded; its result is). Anything
 * that is not such a list comes back empty.
 */
export async function keepFinalMessages(input: FinalMessages): Promise<FinalMessages> {
  const raw = input as unknown as Record<string, unknown> | null;
  const messages = Array.isArray(raw?.messages) ? (raw.messages as FinalMessages['messages']) : [];
  const baseLength = typeof raw?.baseLength === 'number' && raw.baseLength >= 0 ? raw.baseLength : 0;
  return Promise.resolve({ baseLength, messages });
}
