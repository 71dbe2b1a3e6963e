import type { Usage } from '../shared';

/** Tokens and cost as the CLI prints them. */

const nf = new Intl.NumberFormat('en-US');

export function formatCost(cost: number | null | undefined): string {
  if (cost === null || cost === undefined) return 'cost unknown';
  if (cost === 0) return '$0';
  return cost < 0.01 ? `$${cost.toFixed(5)}` : `$${cost.toFixed(4)}`;
}

export function totalInput(usage: Usage): number {
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
}

export function formatUsage(usage: Usage): string {
  const cache =
    usage.cacheReadInputTokens || usage.cacheCreationInputTokens
      ? ` (cache read ${nf.format(usage.cacheReadInputTokens)}, write ${nf.format(usage.cacheCreationInputTokens)})`
      : '';
  return `${nf.format(totalInput(usage))} in${cache} / ${nf.format(usage.outputTokens)} out tokens`;
}
