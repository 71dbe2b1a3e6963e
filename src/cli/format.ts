import { formatRateLimitWait } from './rate-limit-status';
import type { AgentRunResult, AgentRunState, RunEvent } from '../shared';
import { DONE_TOOL_NAME, EVENT_ANSWER_CHARS, EVENT_TOOL_OUTPUT_CHARS, describeToolCall } from '../shared';
import { CUT_INPUT_NOTE, formatApproval, inputLines, previewWasCut } from './approval-view';
import { isLive, type RunStatusReport } from './run-status';
import type { ServerRecord } from './server-record';
import { visibleLine as one, visibleText as body } from './terminal-text';
import { approvalOrigin, formatSubagentEvent, subagentStateLines } from './subagent-lines';
import { formatCost, formatUsage } from './usage-text';

export { formatCost, formatUsage, totalInput } from './usage-text';
import { describeForkOrigin } from './fork-origin';

const nf = new Intl.NumberFormat('en-US');

/** The first non-blank line of `text`, cut to `max` characters, its controls visible. */
function firstLine(text: string, max = 160): string {
  const line = text.split('\n').find((l) => l.trim()) ?? '';
  return one(line.length > max ? `${line.slice(0, max - 1)}…` : line);
}

/** A wait in seconds (one decimal under 10 s). */
export function formatWait(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
}

/**
 * One progress line per event, or undefined for events that print nothing. Every part that came
 * from the model, a tool or a client is made inert first (terminal-text.ts).
 */
export function formatEvent(event: RunEvent, runId = '<run-id>'): string | undefined {
  switch (event.kind) {
    case 'run_started':
      return `● run started · model ${one(event.model)} · max ${event.maxIterations} iterations`;
    case 'model_call_started':
      return undefined;
    case 'model_call_finished':
      // The call's text is not quoted here: run/follow print it whole (live, or from the text events).
      return (
        `◆ model call ${event.iteration} · ${formatUsage(event.usage)} · ${formatCost(event.costUsd)}` +
        ` · ${one(event.stopReason ?? 'no stop reason')}`
      );
    case 'model_call_failed':
      return `✗ model call ${event.iteration} failed: ${one(event.error)}`;
    case 'rate_limited':
      return `  … waited ${formatWait(event.waitMs)} for the ${one(event.provider)} rate budget (docs/models.md, "Rate limits")`;
    case 'reasoning':
    case 'text':
      // Printed by run/follow's live printer (live-events.ts), which knows what the stream showed already.
      return undefined;
    case 'tool_call_started':
      return event.name === DONE_TOOL_NAME
        ? `  → ${DONE_TOOL_NAME}: ${doneSummary(event.input)}`
        : `  → ${one(describeToolCall(event.name, event.input))}`;
    case 'tool_call_finished':
      return formatToolOutput(event, runId);
    case 'notice':
      return `  ! ${one(event.message)}`;
    case 'user_message':
      return `» message: ${firstLine(event.message)}`;
    case 'approval_requested':
      return formatApproval(runId, event.toolUseId, event.name, event.input);
    case 'approval_resolved':
      return (
        `  ${event.approved ? '✓ approved' : '✗ denied'} ${one(event.name)} (${one(event.toolUseId)})` +
        `${event.reason ? `: ${one(event.reason)}` : ''}`
      );
    case 'answer':
      // Events keep an answer's first EVENT_ANSWER_CHARS characters; the run's result has it whole.
      return event.truncated
        ? `\n${body(event.text.trim())}\n[answer cut at ${nf.format(EVENT_ANSWER_CHARS)} characters: progress events carry no more of it]\n`
        : `\n${body(event.text.trim())}\n`;
    case 'awaiting_input':
      return `… waiting for a message: durable-agent send ${one(runId)} "<message>" (Ctrl-C ends the session)`;
    case 'run_finished':
      return undefined;
    case 'subagent_started':
    case 'subagent_finished':
      return formatSubagentEvent(event);
    case 'checkpoint':
      return event.pending
        ? `  ⌂ checkpoint of turn ${event.turn} pending (the store is unavailable; retried before the next call)`
        : `  ⌂ checkpoint turn ${event.turn} · ${event.filesChanged} files changed · ${nf.format(event.bytes)} bytes uploaded · ${one(event.id.slice(0, 12))}`;
    case 'workspace_diverged':
      return `  ! the workspace differs from the run's last checkpoint (${event.count} paths: ${one(event.paths.slice(0, 5).join(', '))}${event.count > 5 ? ', …' : ''}); kept as it is`;
    default: {
      const unknown: never = event;
      return one(JSON.stringify(unknown));
    }
  }
}

/** Lines of a tool's output shown under its result line; the rest is counted. */
export const TOOL_OUTPUT_LINES = 8;
/** Characters shown of one output line. */
const TOOL_OUTPUT_LINE_CHARS = 160;

/**
 * A tool call's result: its first non-blank output line beside the name, the next lines indented
 * below it up to TOOL_OUTPUT_LINES in all, then how much more there is and where to read it whole.
 */
function formatToolOutput(event: Extract<RunEvent, { kind: 'tool_call_finished' }>, runId: string): string {
  const head = `  ${event.isError ? '✗' : '✓'} ${one(event.name)}: `;
  const lines = event.preview.replace(/\s+$/, '').split('\n');
  while (lines.length > 0 && !lines[0]!.trim()) lines.shift();
  if (lines.length === 0) return `${head}(no output)`;
  const shown = lines.slice(0, TOOL_OUTPUT_LINES).map((l) => cutLine(l));
  const hidden = lines.length - shown.length;
  const more = [
    ...(hidden > 0 ? [`${nf.format(hidden)} more line${hidden === 1 ? '' : 's'}`] : []),
    ...(event.truncated
      ? [
          `output cut at ${nf.format(EVENT_TOOL_OUTPUT_CHARS)} characters: durable-agent transcript ${one(runId)} has all of it`,
        ]
      : []),
  ];
  return [
    `${head}${shown[0]}`,
    ...shown.slice(1).map((l) => `      ${l}`),
    ...(more.length ? [`      … ${more.join('; ')}`] : []),
  ].join('\n');
}

function cutLine(raw: string): string {
  // Tabs (read_file's line numbers, tables) as spaces: a visible tab sign would clutter every line.
  const line = raw.replace(/\t/g, '  ');
  return one(line.length > TOOL_OUTPUT_LINE_CHARS ? `${line.slice(0, TOOL_OUTPUT_LINE_CHARS - 1)}…` : line);
}

/** A `done` call's summary (its answer), as one line. */
function doneSummary(input: unknown): string {
  const summary = (input as { summary?: unknown } | null)?.summary;
  return typeof summary === 'string' && summary.trim() ? firstLine(summary, 200) : '(no summary)';
}

export function formatState(id: string, state: AgentRunState): string {
  return [
    `run         ${one(id)}`,
    `status      ${one(state.status)}`,
    `model       ${one(state.model)}`,
    `iteration   ${state.iteration} / ${state.maxIterations}`,
    `tokens      ${formatUsage(state.usage)}`,
    `cost        ${formatCost(state.costUsd)}${state.maxBudgetUsd !== undefined ? ` of ${formatCost(state.maxBudgetUsd)} budget` : ''}`,
    `last stop   ${one(state.lastStopReason ?? '-')}`,
    `tools       ${state.activeTools.length ? one(state.activeTools.join(', ')) : '-'}`,
    ...state.pendingApprovals.flatMap((a) => [
      `approval    ${one(a.toolUseId)}: ${one(a.name)}${approvalOrigin(a)} would run with this input:`,
      ...inputLines(a.input),
      ...(previewWasCut(a.input) ? [`  ! ${CUT_INPUT_NOTE}`] : []),
    ]),
    ...subagentStateLines(state),
    ...(state.pendingMessages ? [`messages    ${state.pendingMessages} waiting`] : []),
    ...(state.session ? ['session     yes'] : []),
    ...checkpointLines(state),
  ].join('\n');
}

/** The run's last workspace checkpoint, and a divergence a worker kept (docs/checkpoints.md). */
function checkpointLines(state: AgentRunState): string[] {
  const lines: string[] = [];
  const c = state.lastCheckpoint;
  if (c && typeof c === 'object') {
    lines.push(
      c.pending
        ? `checkpoint  turn ${Number(c.turn)} pending (the store was unavailable; retried before the next call)`
        : `checkpoint  turn ${Number(c.turn)} · ${Number(c.filesChanged)} files changed · ${nf.format(Number(c.bytes))} bytes · ${one(String(c.id))}`,
    );
  }
  const d = state.workspaceDiverged;
  if (d && typeof d === 'object' && Array.isArray(d.paths)) {
    const shown = d.paths.slice(0, 5).map((p) => one(String(p)));
    lines.push(
      `workspace   differs from the last checkpoint in ${Number(d.count)} paths (${shown.join(', ')}${Number(d.count) > 5 ? ', …' : ''}); kept as it is`,
    );
  }
  return lines;
}

/** `durable-agent status`: the live state of an open run, else what the run left and why it ended. */
export function formatStatusReport(report: RunStatusReport): string {
  const temporal = `temporal    ${report.executionStatus.toLowerCase()}`;
  const fork = report.forkedFrom ? [`forked from ${one(describeForkOrigin(report.forkedFrom))}`] : [];
  const waiting = (report.rateLimited ?? []).map(
    (w, i) => `${i === 0 ? 'waiting     ' : '            '}${one(formatRateLimitWait(w))}`,
  );
  if (isLive(report)) return [formatState(report.workflowId, report), ...waiting, temporal, ...fork].join('\n');
  return [
    `run         ${one(report.workflowId)}`,
    `status      ${one(report.status)}`,
    temporal,
    `model       ${one(report.model ?? '-')}`,
    `iteration   ${report.iteration ?? '-'}`,
    ...(report.usage ? [`tokens      ${formatUsage(report.usage)}`] : []),
    `cost        ${report.model === null && report.iteration === null ? '-' : formatCost(report.costUsd)}`,
    ...(report.reason ? [`reason      ${firstLine(report.reason, 300)}`] : []),
    ...(report.closeTime ? [`closed      ${report.closeTime}`] : []),
    ...(report.server ? serverRecordLines(report.server) : []),
    ...waiting,
    ...(report.note ? [`note        ${one(report.note)}`] : []),
    ...fork,
  ].join('\n');
}

/** What the server holds of an open run that did not answer in time: its calls in flight, and when it was read. */
function serverRecordLines(record: ServerRecord): string[] {
  const calls = record.inFlight.map((c) => {
    const started = c.startedAt ? `since ${c.startedAt.slice(11, 19)}` : 'waiting for a worker';
    const attempt = c.attempt > 1 ? `, attempt ${c.attempt}` : '';
    return `${one(c.kind)} ${one(c.name)}${c.detail ? `: ${one(c.detail)}` : ''} (${started}${attempt})`;
  });
  return [
    ...(calls.length ? calls.map((c, i) => `${i === 0 ? 'running     ' : '            '}${c}`) : ['running     -']),
    `as of       ${record.asOf.slice(11, 19)} UTC (the server's record)`,
  ];
}

/** `textShown`: the final text was printed already (as the run's last answer event), so it is not repeated. */
export function formatResult(result: AgentRunResult, link?: string, textShown = false): string {
  const lines = [
    ...(textShown ? [] : ['', body(result.finalText.trim()) || '(no final text)']),
    '',
    `exit reason ${one(result.exitReason)}${result.error ? ` (${one(result.error.message)})` : ''}`,
    `iterations  ${result.iterations}`,
    `tokens      ${formatUsage(result.usage)}`,
    `cost        ${formatCost(result.costUsd)}`,
    `model       ${one(result.model)}`,
  ];
  if (link) lines.push(`web ui      ${link}`);
  return lines.join('\n');
}

/** The one-line reason printed on stderr when a run did not complete. */
export function exitLine(result: AgentRunResult): string {
  return `run ended '${one(result.exitReason)}'${result.error ? `: ${one(result.error.message)}` : ''}`;
}
