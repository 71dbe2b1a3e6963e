import {
  ROOT_HASH,
  SUMMARY_INSTRUCTION,
  chainHash,
  hashString,
  textOf,
  toolResultBlock,
  type ContentBlock,
  type ConversationDelta,
  type Message,
  type WireMessage,
} from '../../shared';
import type { ExecutionStatus, HistoryRecord } from './history';
import type { TranscriptSubagent } from './subagents';

/** Activities whose input is the conversation as a model call sends it. */
const MODEL_CALLS = new Set(['callModel', 'firstModelCall', 'summarizeRun']);
/** Where a compaction (or a drop of older turns at the hard cap) replaced the conversation. */
export interface TranscriptCompaction {
  /** Index in `messages` of the first message of the conversation that replaced the earlier turns. */
  atIndex: number;
  /** How many messages (the ones just before `atIndex`) the model no longer saw after it. */
  replacedMessages: number;
  /** `summary`: a model-written summary replaced them; `dropped`: they were dropped without one. */
  kind: 'summary' | 'dropped';
  /** The summary the compaction call returned, when there was one. */
  summary?: string;
}

export interface TranscriptExecution {
  runId: string;
  /** Index in `messages` of the first message this execution added (or `messages.length` if none). */
  firstMessageIndex: number;
  status: ExecutionStatus | 'running';
}

/** A run's conversation rebuilt from its history: see docs/transcript.md for the shape. */
export interface Transcript {
  workflowId: string;
  status: ExecutionStatus | 'running';
  /** The system prompt the model saw (the context assembly's result, else the run's own). */
  system: string | null;
  systemSource: 'assembleContext' | 'model_call' | 'run_input' | null;
  /** What the system prompt was assembled from (files, sizes), when the run assembled one. */
  contextSources?: unknown[];
  executions: TranscriptExecution[];
  /** Every message of the run, in order, in the Anthropic Messages shape; compactions mark where the model's view restarted. */
  messages: Message[];
  compactions: TranscriptCompaction[];
  /** The closing summary at the iteration limit (not part of the conversation), after `messages[atIndex - 1]`. */
  closingSummary?: { atIndex: number; content: ContentBlock[] };
  /** The run's result when its last execution completed. */
  result?: unknown;
  /** Why the last execution ended without a result (failed, terminated, …), when it says. */
  reason?: string;
  /** Subagents the run started, each under its `task` call (transcript/subagents.ts). */
  subagents?: TranscriptSubagent[];
}

interface PendingCall {
  activityType: string;
  /** Conversation length the call sent (segment-relative) and the chain value there. */
  total: number;
  headHash: string;
  instruction?: string;
}

/**
 * Rebuilds the conversation the way the worker's cache does (src/activities/conversation-cache.ts):
 * each model call's input is a delta against the previous conversation, checked by the hash chain;
 * tool results sent by reference are found by their content hash among the tool activities'
 * results. A conversation that does not extend the previous one replaced it: a compaction.
 */
export class TranscriptBuilder {
  readonly transcript: Transcript;
  /** Start in `messages` of the conversation the model currently sees. */
  private segmentStart = 0;
  /** chain[i]: hash after the segment's first i messages. */
  private chain: string[] = [ROOT_HASH];
  /** Segment messages a model call has seen (they are never replaced silently). */
  private committed = 0;
  /** Tool results by content hash, for `tool_result_ref` blocks. */
  private readonly toolResults = new Map<string, string>();
  private readonly pending = new Map<string, PendingCall>();
  private compactionSummary: string | undefined;
  /**
   * One entry per iteration (turn) in order, across executions: the index in `messages` of the turn's
   * answer, or undefined when history's conversation could not place it (src/cli/checkpoints/turns.ts).
   */
  readonly answers: Array<number | undefined> = [];

  constructor(workflowId: string) {
    this.transcript = {
      workflowId,
      status: 'running',
      system: null,
      systemSource: null,
      executions: [],
      messages: [],
      compactions: [],
    };
  }

  add(record: HistoryRecord): void {
    const t = this.transcript;
    switch (record.kind) {
      case 'execution_started':
        t.executions.push({ runId: record.runId, firstMessageIndex: t.messages.length, status: 'running' });
        t.status = 'running';
        return this.started(record.input);
      case 'activity_scheduled':
        if (MODEL_CALLS.has(record.activityType)) {
          return this.modelCall(record.eventId, record.activityType, record.input);
        }
        return;
      case 'activity_completed':
      case 'local_activity_completed':
        return this.completed(
          record.activityType,
          record.kind === 'activity_completed' ? record.scheduledEventId : undefined,
          record.result,
        );
      case 'continued_as_new':
        this.setStatus('continued_as_new');
        return;
      case 'closed':
        this.setStatus(record.status);
        if (record.result !== undefined) t.result = record.result;
        if (record.reason !== undefined) t.reason = record.reason;
        return;
    }
  }

  private setStatus(status: ExecutionStatus): void {
    const last = this.transcript.executions[this.transcript.executions.length - 1];
    if (last) last.status = status;
    this.transcript.status = status;
  }

  private get segmentLength(): number {
    return this.transcript.messages.length - this.segmentStart;
  }

  private started(input: unknown): void {
    const run = asObject(input);
    const t = this.transcript;
    if (typeof run?.['systemPrompt'] === 'string' && t.systemSource === null) {
      t.system = run['systemPrompt'];
      t.systemSource = 'run_input';
    }
    // A continued execution carries the assembled context (when it was assembled) in its input.
    this.assembled(asObject(asObject(run?.['resume'])?.['context']));
    const carried = asObject(asObject(run?.['resume'])?.['conversation']);
    if (carried && Array.isArray(carried['messages'])) {
      // What the previous execution handed over; messages past `syncedLength` may still change.
      const messages = carried['messages'] as Message[];
      const synced = typeof carried['syncedLength'] === 'number' ? carried['syncedLength'] : 0;
      this.observe(0, ROOT_HASH, messages, Math.min(synced, messages.length));
    } else if (Array.isArray(run?.['conversation']) && t.messages.length === 0) {
      // A fork starts from the conversation it inherited (docs/checkpoints.md).
      this.observe(0, ROOT_HASH, run['conversation'] as Message[], 0);
    } else if (typeof run?.['prompt'] === 'string' && t.messages.length === 0) {
      this.observe(0, ROOT_HASH, [{ role: 'user', content: run['prompt'] }], 0);
    }
  }

  private modelCall(eventId: string, activityType: string, input: unknown): void {
    const call = asObject(input);
    const delta = asObject(call?.['conversation']) as ConversationDelta | undefined;
    if (!delta || !Array.isArray(delta.delta) || typeof delta.baseLength !== 'number') return;
    const t = this.transcript;
    if (typeof call?.['system'] === 'string' && t.systemSource !== 'assembleContext') {
      t.system = call['system'];
      t.systemSource = 'model_call';
    }
    const resolved = this.resolve(delta.delta);
    // A reference this history cannot resolve (a result cut to fit, say) made the worker miss
    // too: the workflow then resent the conversation in full, which the next record carries.
    if (!resolved) return;
    const base = delta.full ? 0 : delta.baseLength;
    const baseHash = delta.full ? ROOT_HASH : delta.baseHash;
    // A run start's call may come back without an answer (its prompt screened by hooks first, then
    // sent again): what it sent counts as seen by the model only once it answered.
    const seen = activityType === 'firstModelCall' ? base : base + resolved.length;
    if (!this.observe(base, baseHash, resolved, seen, delta.headHash)) return;
    const instruction = typeof call?.['instruction'] === 'string' ? call['instruction'] : undefined;
    this.pending.set(eventId, {
      activityType,
      total: base + resolved.length,
      headHash: delta.headHash,
      ...(instruction !== undefined ? { instruction } : {}),
    });
  }

  private completed(activityType: string, scheduledEventId: string | undefined, result: unknown): void {
    const out = asObject(result);
    if (activityType === 'runTool') {
      if (typeof out?.['content'] === 'string') this.toolResults.set(hashString(out['content']), out['content']);
      return;
    }
    if (activityType === 'keepFinalMessages') {
      // The run's end: the messages no model call sent (the last tool results), after the ones it did.
      const t = this.transcript;
      const base = typeof out?.['baseLength'] === 'number' ? out['baseLength'] : this.segmentLength;
      t.messages.length = this.segmentStart + Math.min(base, this.segmentLength);
      if (Array.isArray(out?.['messages'])) t.messages.push(...(out['messages'] as Message[]));
      return;
    }
    if (activityType === 'firstModelCall') {
      // Run start and the first call in one (0.3.0): the context, then the answer when there is one.
      this.assembled(asObject(asObject(out?.['prepared'])?.['context']));
      const response = asObject(out?.['response']);
      if (response) return this.completed('callModel', scheduledEventId, response);
      if (scheduledEventId !== undefined) this.pending.delete(scheduledEventId);
      return;
    }
    if (activityType === 'assembleContext' || activityType === 'prepareRun') {
      // `assembleContext` returns the assembled context; `prepareRun` wraps it in `context`.
      this.assembled(activityType === 'prepareRun' ? asObject(out?.['context']) : out);
      return;
    }
    const call = scheduledEventId !== undefined ? this.pending.get(scheduledEventId) : undefined;
    // An answer whose request this history could not place is still a turn: the numbering goes on.
    if (!call && activityType === 'callModel' && Array.isArray(out?.['content'])) this.answers.push(undefined);
    if (!call || !out) return;
    this.pending.delete(scheduledEventId!);
    if (call.activityType !== 'summarizeRun') {
      if (!Array.isArray(out['content'])) return;
      const assistant: Message = { role: 'assistant', content: out['content'] as ContentBlock[] };
      const placed = this.observe(call.total, call.headHash, [assistant], call.total + 1);
      this.answers.push(placed ? this.segmentStart + call.total : undefined);
      return;
    }
    const response = asObject(out['response']);
    const content = Array.isArray(response?.['content']) ? (response['content'] as ContentBlock[]) : [];
    if (call.instruction === SUMMARY_INSTRUCTION) {
      this.transcript.closingSummary = { atIndex: this.segmentStart + call.total, content };
    } else {
      this.compactionSummary = typeof out['text'] === 'string' ? out['text'] : textOf(content);
    }
  }

  private assembled(context: Record<string, unknown> | undefined): void {
    if (typeof context?.['system'] !== 'string') return;
    this.transcript.system = context['system'];
    this.transcript.systemSource = 'assembleContext';
    if (Array.isArray(context['sources'])) this.transcript.contextSources = context['sources'];
  }

  /** Wire messages with tool results by reference made whole, or undefined when one is unknown. */
  private resolve(wire: WireMessage[]): Message[] | undefined {
    const messages: Message[] = [];
    for (const message of wire) {
      if (typeof message.content === 'string' || !message.content.some((b) => b.type === 'tool_result_ref')) {
        messages.push(message as Message);
        continue;
      }
      const content: ContentBlock[] = [];
      for (const block of message.content) {
        if (block.type !== 'tool_result_ref') {
          content.push(block as ContentBlock);
          continue;
        }
        const ref = block as { tool_use_id: string; content_hash: string; is_error?: boolean };
        const text = this.toolResults.get(ref.content_hash);
        if (text === undefined) return undefined;
        content.push(toolResultBlock(ref.tool_use_id, text, ref.is_error === true));
      }
      messages.push({ role: message.role, content });
    }
    return messages;
  }

  /**
   * Places `added` after the first `base` messages of the current conversation (which must end
   * at `baseHash`). Messages that match are kept as they are; uncommitted ones that differ are
   * replaced; a conversation that drops committed messages starts a new segment (a compaction).
   * Returns false, changing nothing, when the base is not the current conversation's or the
   * result does not end at `headHash`.
   */
  private observe(base: number, baseHash: string, added: Message[], committedUpTo: number, headHash?: string) {
    if (base > this.segmentLength || this.chain[base] !== baseHash) return false;
    const hashes: string[] = [];
    let hash = baseHash;
    for (const message of added) {
      hash = chainHash(hash, message);
      hashes.push(hash);
    }
    if (headHash !== undefined && hash !== headHash) return false;
    let same = 0;
    while (same < added.length && this.chain[base + same + 1] === hashes[same]) same++;
    const kept = base + same;
    const t = this.transcript;
    if (kept < this.committed && kept < this.segmentLength) {
      // The model will no longer see committed messages: they were compacted or dropped.
      const replaced = this.segmentLength;
      const prefix = t.messages.slice(this.segmentStart, this.segmentStart + base);
      const summary = this.compactionSummary;
      this.compactionSummary = undefined;
      t.compactions.push({
        atIndex: t.messages.length,
        replacedMessages: replaced,
        kind: summary !== undefined ? 'summary' : 'dropped',
        ...(summary !== undefined ? { summary } : {}),
      });
      this.segmentStart = t.messages.length;
      this.chain = this.chain.slice(0, base + 1);
      t.messages.push(...prefix);
      this.committed = 0;
    } else {
      t.messages.length = this.segmentStart + kept;
      this.chain.length = kept + 1;
    }
    for (let i = same; i < added.length; i++) {
      t.messages.push(added[i]!);
      this.chain.push(hashes[i]!);
    }
    this.committed = Math.max(this.committed, committedUpTo);
    return true;
  }
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
