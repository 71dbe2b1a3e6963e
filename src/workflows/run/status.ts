import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { SearchAttributePair, SearchAttributeUpdatePair } from '@temporalio/common';
import type { PendingApproval, RunStatus } from '../../shared/run';
import {
  INDEXED_COST_FLOOR_USD,
  INDEXED_ITERATION_FLOOR,
  costSearchAttribute,
  indexStep,
  iterationsSearchAttribute,
  modelSearchAttribute,
  statusSearchAttribute,
} from '../../shared/search-attributes';
import type { RunState } from './run-state';

/** The status value an execution is left with when it continues as new (the next execution says `running`). */
export const CONTINUED_STATUS = 'continued';

/** The search attribute values the server holds for this execution, as far as this workflow knows. */
interface Indexed {
  status: string;
  iterations?: number;
  model?: string;
  /** Absent (never written, or removed): undefined. */
  costUsd?: number;
}

/** What the board shows besides the run's state. */
export interface BoardView {
  model: string;
  maxIterations: number;
  maxBudgetUsd?: number;
  pendingApprovals: () => PendingApproval[];
  /** A warning that belongs on top, e.g. that bash runs unsandboxed. */
  warning?: () => string | undefined;
  /** What the system prompt was assembled from. */
  context?: () => string | undefined;
}

/**
 * What operators see without asking the run: the search attributes (list and filter runs) and the
 * Current Details line in the Web UI.
 *
 * Each upsert is a billable action and a history event. A run started with its search attributes
 * already set (`startSearchAttributes`: the client helper, hence the CLI, does) is indexed on
 * change: an upsert when the status changes (with the exact iterations and cost), and between status
 * changes only when iterations or cost reach the next 1-2-5 step from 10 iterations / 0.10 USD
 * (`indexStep`). A run started without them (by another client) writes them all at its first index.
 */
export class StatusBoard {
  /** What the server holds now: the attributes the run was started (or continued) with, else nothing. */
  private indexed: Indexed;

  constructor(
    private readonly state: RunState,
    private readonly view: BoardView,
  ) {
    // A run started without them (by another client) has none: its first index writes them all.
    const start = workflowInfo().typedSearchAttributes;
    this.indexed = {
      status: start.get(statusSearchAttribute) ?? '',
      iterations: start.get(iterationsSearchAttribute),
      model: start.get(modelSearchAttribute),
      costUsd: start.get(costSearchAttribute),
    };
  }

  /**
   * Brings the search attributes up to date when a value people filter on changed: the status, the
   * model, or a 1-2-5 step of iterations or cost (each write is a billable action and a history event).
   */
  index(status: RunStatus | typeof CONTINUED_STATUS = this.state.status): void {
    // Current Details follow every status change too (not a command: free, and replay-safe).
    this.showDetails();
    // Handed over: a late subagent report must not index this closing execution as running again.
    if (this.indexed.status === CONTINUED_STATUS) return;
    this.indexOnChange(status, this.indexed);
  }

  /** Writes only what changed, and only on a status change or a new 1-2-5 step (see the class). */
  private indexOnChange(status: string, last: Indexed): void {
    const cost = this.state.costUsd ?? undefined;
    const iterations = this.state.iteration;
    const stepped =
      indexStep(iterations, INDEXED_ITERATION_FLOOR) > indexStep(last.iterations, INDEXED_ITERATION_FLOOR) ||
      indexStep(cost, INDEXED_COST_FLOOR_USD) > indexStep(last.costUsd, INDEXED_COST_FLOOR_USD);
    if (status === last.status && this.view.model === last.model && !stepped) return;
    const pairs: SearchAttributeUpdatePair[] = [
      ...(status !== last.status ? [{ key: statusSearchAttribute, value: status }] : []),
      ...(iterations !== last.iterations ? [{ key: iterationsSearchAttribute, value: iterations }] : []),
      ...(this.view.model !== last.model ? [{ key: modelSearchAttribute, value: this.view.model }] : []),
      // An unknown cost removes the attribute: a stale number would read as a price.
      ...(cost !== last.costUsd ? [{ key: costSearchAttribute, value: cost ?? null }] : []),
    ];
    this.indexed = { status, iterations, model: this.view.model, ...(cost !== undefined ? { costUsd: cost } : {}) };
    if (pairs.length) upsertSearchAttributes(pairs);
  }

  /**
   * The search attributes the next execution starts with after continue-as-new: `running`, not the
   * `continued` this execution ends with (it would inherit that until its first workflow task).
   */
  continuationAttributes(status: 'running' | 'awaiting_input'): SearchAttributePair[] {
    return [
      { key: statusSearchAttribute, value: status },
      { key: iterationsSearchAttribute, value: this.state.iteration },
      { key: modelSearchAttribute, value: this.view.model },
      ...(this.state.costUsd !== null ? [{ key: costSearchAttribute, value: this.state.costUsd }] : []),
    ];
  }

  /** Whether Current Details is rendered when read (see {@link lazyDetails}); else after each change. */
  private readonly lazy = lazyDetails(() => renderDetails(this.state, this.view));

  /** The live Current Details in the Web UI: not a command, so it costs no history and needs no patch. */
  showDetails(): void {
    if (this.lazy) this.lazy.changed();
    else setCurrentDetails(renderDetails(this.state, this.view));
  }
}

/** The SDK's per-run activator, as far as Current Details is concerned. */
interface DetailsHolder {
  currentDetails: string;
}

/**
 * Current Details rendered when something reads it (the Web UI's metadata query, `getCurrentDetails`),
 * not after every change: a run changes it several times per iteration, and rendering each time was
 * about a tenth of the time the bundle's own code took in the throughput bench (docs/benchmarks.md). The
 * SDK keeps the value in its activator's `currentDetails` field, which its metadata query reads; that
 * field becomes an accessor here. `setCurrentDetails` still sets a value (it stays until the next
 * change). Undefined, and the caller renders eagerly, where the field is not there as expected (a
 * different SDK): test/clients/current-details.test.ts reads the details through the real query.
 * A render that throws (it should not) answers with the last value and why, so the metadata query
 * (which also lists the run's handlers) still answers.
 */
export function lazyDetails(render: () => string): { changed(): void } | undefined {
  const holder = (globalThis as { __TEMPORAL_ACTIVATOR__?: DetailsHolder }).__TEMPORAL_ACTIVATOR__;
  const field = holder && Object.getOwnPropertyDescriptor(holder, 'currentDetails');
  if (!holder || !field || !field.writable || !field.configurable || typeof field.value !== 'string') return undefined;
  let value = field.value;
  /** The last value a render (or `setCurrentDetails`) made: what a failed render falls back on. */
  let good = value;
  let stale = false;
  Object.defineProperty(holder, 'currentDetails', {
    configurable: true,
    enumerable: field.enumerable,
    get: () => {
      if (stale) {
        stale = false;
        try {
          value = good = render();
        } catch (err) {
          value = `${good}  \n(not up to date: ${err instanceof Error ? err.message : String(err)})`;
        }
      }
      return value;
    },
    set: (details: string) => {
      value = good = details;
      stale = false;
    },
  });
  return {
    changed: () => {
      stale = true;
    },
  };
}

/**
 * Markdown for the Web UI. What needs a person comes first (pending approvals, warnings), since the
 * UI may clip the end. No `$`: the UI's markdown renders `$…$` as math. Names from the model are
 * reduced to safe characters so they cannot inject markdown or HTML.
 */
export function renderDetails(state: RunState, view: BoardView): string {
  const usage = state.usage;
  const tokens = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  const cost = state.costUsd === null ? 'unknown' : `${state.costUsd.toFixed(4)} USD`;
  const approvals = view.pendingApprovals();
  const warning = view.warning?.();
  // Paths come from the workspace: shown with safe characters only, so they cannot inject markdown
  // (`+` and `…` are safe mid-line: "+2 more", a cut path).
  const context = view.context?.()?.replace(/[^A-Za-z0-9._:/ ,·+…-]/g, '_');
  const running = state.activeTools.size ? [...state.activeTools.values()].map(safeName).join(', ') : '-';
  const lines = [
    ...(approvals.length
      ? [
          `**awaiting approval:** ${approvals.map((a) => `${safeName(a.name)} (${shownId(a.toolUseId)})${waitsIn(a)}`).join(', ')}`,
        ]
      : []),
    ...(warning ? [`**warning:** ${warning}`] : []),
    `**${state.status}** · iteration ${state.iteration} / ${view.maxIterations} · model ${safeName(view.model)}` +
      (state.finalStatus ? '' : ` · running: ${running}`),
    `tokens ${tokens} in / ${usage.outputTokens} out · cost ${cost}` +
      (view.maxBudgetUsd !== undefined ? ` of ${view.maxBudgetUsd} USD` : ''),
    // What the system prompt was assembled from, when the frame has room (approvals and warnings come first).
    ...(context && !approvals.length && !warning ? [`system prompt built from: ${context}`] : []),
  ];
  // One paragraph with hard line breaks: the Web UI's frame for it is short, and blank-line
  // paragraphs pushed the last line out of view.
  return lines.join('  \n');
}

/** Where a subagent's call waits: the subagent's workflow id (and agent), which an operator can open. */
function waitsIn(a: PendingApproval): string {
  if (!a.subagent) return '';
  const agent = a.subagent.agent !== undefined ? ` (${safeName(a.subagent.agent)})` : '';
  return ` in subagent ${safeName(a.subagent.workflowId)}${agent}`;
}

/** A tool_use id as shown: exact when it is made of safe characters, otherwise marked as altered. */
function shownId(id: string): string {
  const safe = safeName(id);
  return safe === id ? id : `${safe}, shown altered: see durable-agent status`;
}

/** Letters, digits and `._:/-` only, at most 64 characters. */
export function safeName(name: string): string {
  const clean = String(name).replace(/[^A-Za-z0-9._:/-]/g, '_');
  return clean.length > 64 ? `${clean.slice(0, 63)}…` : clean;
}
