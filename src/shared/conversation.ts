import { ErrorTypes } from './constants';
import type { ContentBlock, Message, ToolResultBlock } from './messages';

/**
 * The conversation travels to the model activity as a delta against what the worker already holds
 * (docs/architecture.md#history-stays-linear), so each message is recorded in event history about once, not once per later
 * model call. Pure code: used by the workflow (sandbox) and the worker alike.
 *
 * Each message extends a hash chain: `chain[i+1] = hash(chain[i], message[i])`. The workflow
 * sends the chain value its delta starts from and the one it ends at; the worker serves the delta
 * only when its cached conversation has exactly that prefix, and otherwise fails fast with a
 * cache miss so the workflow resends the whole conversation once.
 */

/** The chain value of an empty conversation. */
export const ROOT_HASH = '0';

/**
 * What the workflow sends in place of a hash while it replays: a replayed activity's input is
 * rebuilt but not sent, so hashing it would be wasted. Not quite never sent, though: when a run is
 * rebuilt, the SDK can flag as replaying the activation whose commands are new (seen for the first
 * model call of a run started by `prepareRun`, scheduled right after that local activity's recorded
 * result), so such a call reaches a worker with this value. The worker then accepts a full load unchecked (its messages
 * travel inline) and answers a delta with a cache miss, after which the workflow resends in full.
 */
export const UNHASHED = 'replay';

/**
 * `Math.imul`, bound once: inside the workflow sandbox (and jest's VM) every `Math.imul` in the loop
 * below was a global lookup through the sandbox's global object, which made hashing ~100× slower.
 */
const imul = Math.imul;

/** cyrb53: a fast, well-mixed 53-bit string hash. Deterministic; not cryptographic (it guards consistency, not trust). */
export function hashString(text: string, seed = 0): string {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = imul(h1 ^ ch, 2654435761);
    h2 = imul(h2 ^ ch, 1597334677);
  }
  h1 = imul(h1 ^ (h1 >>> 16), 2246822507) ^ imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = imul(h2 ^ (h2 >>> 16), 2246822507) ^ imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

export function chainHash(previous: string, message: Message, json = JSON.stringify(message)): string {
  return hashString(`${previous}|${json}`);
}

/** The one way a tool_result block is built, so workflow and worker produce identical JSON. */
export function toolResultBlock(toolUseId: string, content: string, isError: boolean): ToolResultBlock {
  return isError
    ? { type: 'tool_result', tool_use_id: toolUseId, content, is_error: true }
    : { type: 'tool_result', tool_use_id: toolUseId, content };
}

/**
 * A tool_result whose content the worker already has (the `runTool` activity cached it), sent by
 * reference so a tool's output is recorded in history once: in the activity's result.
 */
export interface ToolResultRef {
  type: 'tool_result_ref';
  tool_use_id: string;
  is_error?: boolean;
  content_hash: string;
}

export type WireBlock = ContentBlock | ToolResultRef;
export interface WireMessage {
  role: 'user' | 'assistant';
  content: string | WireBlock[];
}

/** What the model activity receives instead of the whole conversation. */
export interface ConversationDelta {
  /** Stable for the whole run, across continue-as-new. */
  id: string;
  /** Number of messages the worker must already hold (0 with `full`). */
  baseLength: number;
  /** Chain value after those messages. */
  baseHash: string;
  /** Messages after the base; tool results may be references. */
  delta: WireMessage[];
  /** Chain value after the delta: the worker checks the conversation it rebuilt against it. */
  headHash: string;
  /** The delta is the whole conversation, inline: sent first and after a cache miss. */
  full: boolean;
}

/** Failure type of a model activity whose worker does not hold the conversation prefix. */
export const CACHE_MISS_ERROR_TYPE = ErrorTypes.ConversationCacheMiss;

/** What a run's conversation carries across continue-as-new. */
export interface ConversationSnapshot {
  id: string;
  messages: Message[];
  /** How many leading messages the worker cache is believed to hold. */
  syncedLength: number;
  /** Tool calls whose results a worker cached (sendable by reference). */
  cachedToolResults: string[];
}
