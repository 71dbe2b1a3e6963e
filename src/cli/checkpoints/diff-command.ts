import type { Client } from '@temporalio/client';
import { changedPaths, diffManifests, type PathChange } from '../../checkpoints/manifest-diff';
import { fileDiff, type FileDiff } from '../../checkpoints/unified-diff';
import type { CheckpointStore } from '../../checkpoints/store';
import { CheckpointUnavailable } from '../cli-errors';
import { UsageError } from '../flags';
import { inertJson, visibleText } from '../terminal-text';
import { readRunHistory, type RunHistory } from '../../client/checkpoints/run-history';
import { cliStore, manifestOf } from './store';
import { checkpointAt, checkpointedTurns, describeTurns } from '../../client/checkpoints/turns';

/** `diff` stops writing file diffs past this many bytes (the `--stat` lines and the JSON list stay whole). */
export const MAX_DIFF_OUTPUT_BYTES = 8 * 1024 * 1024;

export interface DiffFlags {
  turn?: number;
  from?: number;
  to?: number;
  stat: boolean;
  json: boolean;
}

/** Which two turns to compare: `--turn N` is N-1 → N; `--from A --to B`; neither is the whole run, 0 → last. */
export function turnRange(flags: DiffFlags, history: Pick<RunHistory, 'lastTurn'>): { from: number; to: number } {
  const last = history.lastTurn;
  const inRange = (flag: string, n: number) => {
    if (n > last) throw new UsageError(`--${flag} ${n}: the run has turns 0 to ${last}`, 'diff');
  };
  if (flags.turn !== undefined) {
    if (flags.from !== undefined || flags.to !== undefined) {
      throw new UsageError('give either --turn N or --from A --to B, not both', 'diff');
    }
    if (flags.turn === 0)
      throw new UsageError('turn 0 is the workspace as the run found it: --turn takes 1 or more', 'diff');
    inRange('turn', flags.turn);
    return { from: flags.turn - 1, to: flags.turn };
  }
  const from = flags.from ?? 0;
  const to = flags.to ?? last;
  inRange('from', from);
  inRange('to', to);
  return { from, to };
}

export interface DiffReport {
  workflowId: string;
  from: { turn: number; checkpointId: string };
  to: { turn: number; checkpointId: string };
  files: Array<Omit<FileDiff, 'text'>>;
  /** The unified diff (absent with `--stat`); cut at MAX_DIFF_OUTPUT_BYTES when `truncated`. */
  diff?: string;
  truncated?: boolean;
}

/** The changes between two turns' checkpoints of a run (manifests only). */
export async function turnChanges(store: CheckpointStore, history: RunHistory, from: number, to: number) {
  const pick = (n: number) => {
    const at = checkpointAt(history, n);
    if (!at.ok) {
      throw new CheckpointUnavailable(
        `turn ${n} has no checkpoint: ${at.why}. Turns with one: ${describeTurns(checkpointedTurns(history))}`,
      );
    }
    return at.ref;
  };
  const a = pick(from);
  const b = pick(to);
  const changes =
    a.id === b.id ? [] : diffManifests(await manifestOf(store, a.id, from), await manifestOf(store, b.id, to));
  return { a, b, changes };
}

/** `durable-agent diff <id> [--turn N | --from A --to B] [--stat] [--json]`. */
export async function diffCommand(
  client: Client,
  id: string,
  flags: DiffFlags,
  write: (text: string) => void,
  store: CheckpointStore = cliStore(),
): Promise<number> {
  const history = await readRunHistory(client, id);
  const { from, to } = turnRange(flags, history);
  const { a, b, changes } = await turnChanges(store, history, from, to);
  const files: FileDiff[] = [];
  let bytes = 0;
  let truncated = false;
  for (const change of changes) {
    if (flags.stat || truncated) {
      files.push(statOnly(change));
      continue;
    }
    const d = await fileDiff(store, change);
    files.push(d);
    bytes += Buffer.byteLength(d.text);
    if (bytes > MAX_DIFF_OUTPUT_BYTES) truncated = true;
  }
  if (flags.json) {
    const report: DiffReport = {
      workflowId: id,
      from: { turn: from, checkpointId: a.id },
      to: { turn: to, checkpointId: b.id },
      files: files.map(({ text: _text, ...rest }) => rest),
      ...(flags.stat ? {} : { diff: shownText(files), ...(truncated ? { truncated } : {}) }),
    };
    write(`${inertJson(JSON.stringify(report, null, 2))}\n`);
    return 0;
  }
  if (changes.length === 0) {
    write(`No files changed between turn ${from} and turn ${to}.\n`);
    return 0;
  }
  if (flags.stat) {
    write(statLines(files));
    return 0;
  }
  write(visibleText(shownText(files)));
  if (truncated) {
    const left = changedPaths(changes).length - files.filter((f) => f.text).length;
    write(`… the diff was cut at ${MAX_DIFF_OUTPUT_BYTES} bytes; ${left} more file(s): --stat lists every file\n`);
  }
  return 0;
}

function statOnly(change: PathChange): FileDiff {
  return { path: change.path, status: change.status, text: '' };
}

function shownText(files: readonly FileDiff[]): string {
  let out = '';
  for (const f of files) {
    if (!f.text) break;
    if (out.length > 0 && Buffer.byteLength(out) + Buffer.byteLength(f.text) > MAX_DIFF_OUTPUT_BYTES) break;
    out += f.text;
  }
  return out;
}

/** One line per path (`A`dded, `D`eleted, `M`odified), then a count. */
export function statLines(files: readonly Pick<FileDiff, 'path' | 'status'>[]): string {
  const letter = { added: 'A', removed: 'D', modified: 'M' } as const;
  const lines = files.map((f) => `${letter[f.status]}  ${visibleText(JSON.stringify(f.path).slice(1, -1))}`);
  return `${lines.join('\n')}\n${files.length} change(s)\n`;
}
