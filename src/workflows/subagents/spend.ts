import { INPUT_PREVIEW_CHARS } from '../../shared/constants';
import { cutChars, previewInput } from '../../shared/bounds';
import { ZERO_USAGE, addUsage, type Usage } from '../../shared/messages';
import type { PendingApproval } from '../../shared/run';
import {
  MAX_REPORTED_APPROVALS,
  MAX_REPORTED_RELEASES,
  MAX_REPORTED_RESOLUTIONS,
  type ResolvedApproval,
} from '../../shared/subagents';
import type { RunState } from '../run/run-state';

/** What a subagent's tree has spent, as it last said (cumulative). */
export interface Spend {
  usage: Usage;
  costUsd: number | null;
}

export const NO_SPEND: Spend = { usage: { ...ZERO_USAGE }, costUsd: 0 };

/** Largest figure a report may carry per field: far above any real run, below float trouble. */
const MAX_FIGURE = 1e13;
const USAGE_KEYS = ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens'] as const;

/**
 * Adds to the run's totals what a subagent's tree spent since it last said (reports are
 * cumulative, so a repeated or late report adds nothing). A cost of null (a price unknown
 * somewhere in the tree) makes the run's cost null too: a partial sum would under-report.
 */
export function addTreeSpend(state: RunState, before: Spend, now: Spend): Spend {
  const delta = {} as Usage;
  const kept = {} as Usage;
  for (const key of USAGE_KEYS) {
    delta[key] = Math.max(0, now.usage[key] - before.usage[key]);
    kept[key] = Math.max(now.usage[key], before.usage[key]);
  }
  state.usage = addUsage(state.usage, delta);
  if (now.costUsd === null || before.costUsd === null) {
    state.costUsd = null;
    return { usage: kept, costUsd: null };
  }
  const costDelta = Math.max(0, now.costUsd - before.costUsd);
  if (state.costUsd !== null) state.costUsd += costDelta;
  return { usage: kept, costUsd: Math.max(now.costUsd, before.costUsd) };
}

/** A spend figure from a signal or a child's result, or undefined when it is not one. */
export function spendOf(raw: unknown): Spend | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const r = raw as { usage?: unknown; costUsd?: unknown };
  if (!r.usage || typeof r.usage !== 'object') return undefined;
  const usage = {} as Usage;
  for (const key of USAGE_KEYS) {
    const v = (r.usage as Record<string, unknown>)[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_FIGURE) return undefined;
    usage[key] = v;
  }
  const cost = r.costUsd;
  if (cost !== null && (typeof cost !== 'number' || !Number.isFinite(cost) || cost < 0 || cost > MAX_FIGURE)) {
    return undefined;
  }
  return { usage, costUsd: cost };
}

/** Pending approvals a subagent reported, each checked and bounded as hostile data. */
export function approvalsOf(raw: unknown, fallbackOrigin: string): PendingApproval[] {
  if (!Array.isArray(raw)) return [];
  return raw.slice(0, MAX_REPORTED_APPROVALS).flatMap((a): PendingApproval[] => {
    if (!a || typeof a !== 'object') return [];
    const x = a as Record<string, unknown>;
    if (typeof x.toolUseId !== 'string' || !x.toolUseId || x.toolUseId.length > 256) return [];
    const origin = x.subagent as { workflowId?: unknown; agent?: unknown } | undefined;
    const workflowId = typeof origin?.workflowId === 'string' ? cutChars(origin.workflowId, 1000) : fallbackOrigin;
    return [
      {
        toolUseId: x.toolUseId,
        name: typeof x.name === 'string' ? cutChars(x.name, 128) : '',
        input: previewInput(x.input, INPUT_PREVIEW_CHARS),
        deadline: typeof x.deadline === 'number' && Number.isFinite(x.deadline) ? x.deadline : 0,
        subagent: {
          workflowId,
          ...(typeof origin?.agent === 'string' ? { agent: cutChars(origin.agent, 100) } : {}),
        },
      },
    ];
  });
}

/** Decisions a subagent reported, each checked and bounded as hostile data. */
export function resolutionsOf(raw: unknown, fallbackOrigin: string): ResolvedApproval[] {
  if (!Array.isArray(raw)) return [];
  return raw.slice(0, MAX_REPORTED_RESOLUTIONS).flatMap((a): ResolvedApproval[] => {
    if (!a || typeof a !== 'object') return [];
    const x = a as Record<string, unknown>;
    if (typeof x.toolUseId !== 'string' || !x.toolUseId || x.toolUseId.length > 256) return [];
    if (typeof x.approved !== 'boolean') return [];
    const origin = x.subagent as { workflowId?: unknown; agent?: unknown } | undefined;
    const workflowId = typeof origin?.workflowId === 'string' ? cutChars(origin.workflowId, 1000) : fallbackOrigin;
    return [
      {
        toolUseId: x.toolUseId,
        name: typeof x.name === 'string' ? cutChars(x.name, 128) : '',
        approved: x.approved,
        ...(typeof x.reason === 'string' ? { reason: cutChars(x.reason, 2_000) } : {}),
        subagent: {
          workflowId,
          ...(typeof origin?.agent === 'string' ? { agent: cutChars(origin.agent, 100) } : {}),
        },
      },
    ];
  });
}

/** Reservation ids a subagent released, as hostile data: strings, bounded. */
export function releasesOf(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  return raw.slice(0, MAX_REPORTED_RELEASES).filter((id): id is string => typeof id === 'string' && id.length <= 200);
}
