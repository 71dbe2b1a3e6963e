import type { CheckpointRef } from '../../shared/checkpoints';
import { isCheckpointIdText } from '../../shared/checkpoint-id';
import { BUILTIN_SIDE_EFFECTS } from '../../shared/run';
import type { ContentBlock, Message } from '../../shared/messages';

/**
 * A run's turns and their checkpoints, as history records them (docs/checkpoints.md). Pure: the
 * reader (run-history.ts) collects what history holds, these functions decide what it means.
 *
 * Turn N is iteration N; turn 0 is the workspace as the run found it. Each tool call of a mutating
 * turn returns the checkpoint it recorded; among a turn's, the one whose recording began last saw
 * every tool's writes (one workspace's recordings are serialized on a worker) and is the turn's. A
 * read-only turn records none: its files are those of the last checkpoint before it.
 */

/** A ref as it came out of an activity result, checked: anything else in history is ignored. */
export function asCheckpointRef(value: unknown): CheckpointRef | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const r = value as Record<string, unknown>;
  const count = (v: unknown) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!count(r.turn) || typeof r.id !== 'string' || !count(r.filesChanged) || !count(r.bytes)) return undefined;
  if (typeof r.startedAtMs !== 'number' || !Number.isFinite(r.startedAtMs)) return undefined;
  const pending = r.pending === true || r.id === '';
  if (!pending && !isCheckpointIdText(r.id)) return undefined;
  return {
    turn: r.turn as number,
    id: pending ? '' : (r.id as string),
    filesChanged: r.filesChanged as number,
    bytes: r.bytes as number,
    startedAtMs: r.startedAtMs,
    ...(count(r.omitted) && (r.omitted as number) > 0 ? { omitted: r.omitted as number } : {}),
    ...(pending ? { pending: true as const } : {}),
  };
}

/** Each turn's checkpoint: among a turn's refs, the latest-started one. */
export function turnWinners(refs: Iterable<CheckpointRef>): Map<number, CheckpointRef> {
  const winners = new Map<number, CheckpointRef>();
  for (const ref of refs) {
    const held = winners.get(ref.turn);
    if (!held || ref.startedAtMs > held.startedAtMs) winners.set(ref.turn, ref);
  }
  return new Map([...winners.entries()].sort((a, b) => a[0] - b[0]));
}

/** What a run's history says about its turns, for the functions below. */
export interface RunTurns {
  /** Iterations the run has had (its last turn's number). */
  lastTurn: number;
  winners: Map<number, CheckpointRef>;
  /** Turns whose answer asked for a tool that may change files (a mutating tool, a subagent). */
  mutatingTurns: Set<number>;
}

export type TurnCheckpoint = { ok: true; ref: CheckpointRef; from: number } | { ok: false; why: string };

/**
 * The checkpoint that holds turn `n`'s files: `n`'s own, or for a read-only turn the last one before
 * it. None when that one is pending (the store was down then), or a turn in between changed files
 * without recording one (checkpoints off on its worker), or the run recorded none at all.
 */
export function checkpointAt(turns: RunTurns, n: number): TurnCheckpoint {
  if (!Number.isSafeInteger(n) || n < 0 || n > turns.lastTurn) {
    return { ok: false, why: `the run has turns 0 to ${turns.lastTurn}` };
  }
  if (turns.winners.size === 0) {
    return { ok: false, why: 'the run recorded no checkpoint (checkpoints were off, or its worker predates them)' };
  }
  for (let t = n; t >= 0; t--) {
    const ref = turns.winners.get(t);
    if (ref) {
      if (ref.pending) {
        return { ok: false, why: `turn ${t}'s checkpoint is pending: the store was unavailable when it was recorded` };
      }
      return { ok: true, ref, from: t };
    }
    if (turns.mutatingTurns.has(t)) {
      return { ok: false, why: `turn ${t} may have changed files and recorded no checkpoint (checkpoints were off)` };
    }
  }
  return { ok: false, why: `the run recorded no checkpoint at or before turn ${n}` };
}

/** Every turn that {@link checkpointAt} finds a checkpoint for. */
export function checkpointedTurns(turns: RunTurns): number[] {
  const ok: number[] = [];
  for (let t = 0; t <= turns.lastTurn; t++) if (checkpointAt(turns, t).ok) ok.push(t);
  return ok;
}

/** `0-3, 5, 7-9`, or `none`. */
export function describeTurns(list: readonly number[]): string {
  if (list.length === 0) return 'none';
  const parts: string[] = [];
  let start = list[0]!;
  let prev = start;
  for (const t of [...list.slice(1), NaN]) {
    if (t === prev + 1) {
      prev = t;
      continue;
    }
    parts.push(start === prev ? `${start}` : `${start}-${prev}`);
    start = prev = t;
  }
  return parts.join(', ');
}

const MAY_WRITE = (name: string) => BUILTIN_SIDE_EFFECTS[name] !== 'read_only';

/** The answer asked for a tool that may change files (built-in read-only tools do not; others may). */
export function asksForWrites(answer: Message | undefined): boolean {
  if (!answer || typeof answer.content === 'string') return false;
  return answer.content.some((b) => b.type === 'tool_use' && MAY_WRITE(String((b as { name?: unknown }).name)));
}

function hasToolCalls(answer: Message): boolean {
  if (typeof answer.content === 'string') return answer.content.includes('<tool_code>');
  return answer.content.some(
    (b: ContentBlock) =>
      b.type === 'tool_use' || (b.type === 'text' && String((b as { text?: unknown }).text).includes('<tool_code>')),
  );
}

/**
 * Where turn `n` ends in `messages` (exclusive): after its answer and, when it called tools, the user
 * message of their results. `undefined` when history's conversation could not place that answer.
 */
export function turnEnd(messages: readonly Message[], answers: readonly (number | undefined)[], n: number) {
  if (n === 0) return 1;
  const at = answers[n - 1];
  if (at === undefined || !messages[at] || messages[at].role !== 'assistant') return undefined;
  const next = messages[at + 1];
  return hasToolCalls(messages[at]) && next?.role === 'user' ? at + 2 : at + 1;
}
