import { Context } from '@temporalio/activity';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { msToNumber } from '@temporalio/common/lib/time';
import type { RunToolInput } from '../shared/activity-io';
import { TOOL_START_TO_CLOSE_TIMEOUT } from '../shared/constants';
import { resolveInWorkspace } from '../tools';
import { DEFAULT_SKIPPED_NAMES, walkFiles } from '../tools/walk';

/** Files listed as changed since the call was scheduled, newest first. */
const MAX_CHANGED_FILES = 10;
/** Entries looked at when searching the workspace for changed files: a bounded, best-effort hint. */
const MAX_FILES_SCANNED = 5000;
/** The tool's own spill files are no news to the model. */
const SKIPPED_NAMES = new Set([...DEFAULT_SKIPPED_NAMES, '.durable-agent']);

export interface OutcomeUnknownOptions {
  /**
   * Changes after this time (epoch ms) may be the earlier attempt's. Defaults, inside an activity, to
   * when the call was first scheduled (see `changesSince`).
   */
  since?: number;
}

/**
 * The `is_error` text a model receives instead of a second execution of a mutating tool whose
 * earlier attempt may have started. It says what happened and what the model can check: for file
 * tools, the file's current state and whether it changed after the call was scheduled; for bash,
 * the workspace files changed since then (timestamps included, so the model can judge). The model
 * decides whether to repeat the call.
 */
export async function outcomeUnknownMessage(
  input: RunToolInput,
  workspace: string,
  attempt: number,
  options: OutcomeUnknownOptions = {},
): Promise<string> {
  const since = options.since ?? changesSince(input);
  const lines = [
    `Error: the outcome of this ${input.name} call is unknown. An earlier attempt (${attempt - 1} before this one) ` +
      'may have started before the worker running it was lost or timed out, so it was NOT run again ' +
      'automatically to avoid doing it twice.',
  ];
  const target = fileTarget(input);
  if (target) {
    try {
      const stat = await fs.stat(await resolveInWorkspace(workspace, target));
      const changed =
        since === undefined
          ? ''
          : stat.mtimeMs >= since
            ? ` It changed after ${new Date(since).toISOString()}, so the earlier attempt may well have written it.`
            : ` It has not changed since ${new Date(since).toISOString()}.`;
      lines.push(
        `Current state of ${target}: exists, ${stat.size} bytes, modified ${stat.mtime.toISOString()}.${changed}`,
      );
    } catch {
      lines.push(`Current state of ${target}: does not exist (or is outside the workspace).`);
    }
    lines.push('Read the file to see whether the change was applied, then repeat the call only if it was not.');
  } else {
    if (since !== undefined) lines.push(await changedFilesLine(workspace, since));
    lines.push(
      'Check whether its effects happened (for example by inspecting files or processes) before repeating it.',
    );
  }
  return lines.join('\n');
}

/**
 * A retry's earlier attempts all started after the activity was first scheduled. A call moved from
 * a lost worker's queue (`mayHaveStarted`) was scheduled anew: its earlier start was no earlier than
 * the workflow's first scheduling (`firstScheduledAt`), so changes before it (the run's own earlier
 * turns, files changed before the run) are not listed as the call's.
 */
function changesSince(input: RunToolInput): number | undefined {
  let scheduled: number;
  try {
    scheduled = Context.current().info.scheduledTimestampMs;
  } catch {
    return undefined; // not inside an activity
  }
  if (!input.mayHaveStarted) return scheduled;
  // The workflow says when it first scheduled the call (0.3.1); earlier builds do not: look back a timeout.
  const first = input.firstScheduledAt;
  return typeof first === 'number' && Number.isFinite(first) && first <= scheduled
    ? first
    : scheduled - msToNumber(TOOL_START_TO_CLOSE_TIMEOUT);
}

/** One line naming the workspace files modified at or after `since` (bounded search). */
async function changedFilesLine(workspace: string, since: number): Promise<string> {
  const changed: { file: string; mtimeMs: number; size: number }[] = [];
  let scanned = 0;
  let complete = true;
  try {
    for await (const file of walkFiles(workspace, SKIPPED_NAMES)) {
      if (++scanned > MAX_FILES_SCANNED) {
        complete = false;
        break;
      }
      try {
        const stat = await fs.stat(path.join(workspace, file));
        if (stat.mtimeMs >= since) changed.push({ file, mtimeMs: stat.mtimeMs, size: stat.size });
      } catch {
        // vanished while we looked
      }
    }
  } catch {
    return 'The workspace could not be searched for changed files.';
  }
  const when = new Date(since).toISOString();
  const scope = complete ? '' : ` (searched the first ${MAX_FILES_SCANNED} files only)`;
  if (changed.length === 0) {
    return `No file in the workspace changed since ${when}${scope}, outside ${[...SKIPPED_NAMES].join(', ')}.`;
  }
  changed.sort((a, b) => b.mtimeMs - a.mtimeMs);
  const shown = changed
    .slice(0, MAX_CHANGED_FILES)
    .map((c) => `${c.file} (${c.size} bytes, ${new Date(c.mtimeMs).toISOString()})`);
  const more = changed.length > MAX_CHANGED_FILES ? ` and ${changed.length - MAX_CHANGED_FILES} more` : '';
  return `Workspace files changed since ${when}${scope}: ${shown.join(', ')}${more}.`;
}

function fileTarget(input: RunToolInput): string | undefined {
  if (input.name !== 'write_file' && input.name !== 'edit_file') return undefined;
  const args = input.input as { path?: unknown } | null;
  return args && typeof args.path === 'string' ? args.path : undefined;
}
