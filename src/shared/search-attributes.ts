import { SearchAttributeType, defineSearchAttributeKey, type SearchAttributePair } from '@temporalio/common';
import { hasKnownPrice } from './pricing';

/**
 * Custom search attributes every run keeps current, so runs can be listed and filtered by status,
 * iterations, cost and model (`durable-agent list`, the Web UI's filter bar). A server must have
 * them registered: the embedded dev server registers them at start (`--search-attribute`), a real
 * cluster with `temporal operator search-attribute create` (see docker-compose.yml).
 */
export const statusSearchAttribute = defineSearchAttributeKey('DurableAgentStatus', SearchAttributeType.KEYWORD);
export const iterationsSearchAttribute = defineSearchAttributeKey('DurableAgentIterations', SearchAttributeType.INT);
export const costSearchAttribute = defineSearchAttributeKey('DurableAgentCostUsd', SearchAttributeType.DOUBLE);
export const modelSearchAttribute = defineSearchAttributeKey('DurableAgentModel', SearchAttributeType.KEYWORD);
/** A fork's origin run (its workflow id), set when the fork starts: `DurableAgentForkedFrom = '<id>'` lists its forks. */
export const forkedFromSearchAttribute = defineSearchAttributeKey(
  'DurableAgentForkedFrom',
  SearchAttributeType.KEYWORD,
);

/** Name → type as the Temporal CLI's `--search-attribute NAME=TYPE` and operator commands spell it. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; cliType: string }> = [
  { name: statusSearchAttribute.name, cliType: 'Keyword' },
  { name: iterationsSearchAttribute.name, cliType: 'Int' },
  { name: costSearchAttribute.name, cliType: 'Double' },
  { name: modelSearchAttribute.name, cliType: 'Keyword' },
  { name: forkedFromSearchAttribute.name, cliType: 'Keyword' },
];

/**
 * Below these, a running run's iterations and cost are not refreshed between status changes (nobody
 * filters on "more than 3 iterations" or "more than 2 cents"); from them on, on the 1-2-5 steps.
 */
export const INDEXED_ITERATION_FLOOR = 10;
export const INDEXED_COST_FLOOR_USD = 0.1;

/**
 * The largest value of the 1-2-5 series (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, …) at or below
 * `value`, or 0 below `floor` (itself on the series). A running run's indexed iterations and cost
 * are rewritten when this changes, so a filter on a step (`DurableAgentCostUsd >= 1`,
 * `DurableAgentIterations >= 50`) finds every run that has reached it, at the cost of one upsert per
 * step, not one per model call.
 */
export function indexStep(value: number | null | undefined, floor: number): number {
  if (value === null || value === undefined || !Number.isFinite(value) || value < floor) return 0;
  const decade = 10 ** Math.floor(Math.log10(value));
  // Float noise: 0.3 / 0.1 must not land below 2 steps. Compare with a relative epsilon.
  const ratio = value / decade + 1e-9;
  return (ratio >= 5 ? 5 : ratio >= 2 ? 2 : 1) * decade;
}

/**
 * What a client sets when it starts a run (no action of its own: part of the start): the run is
 * `running`, at iteration 0, on its model, having cost 0 USD (left unset for a model without a known
 * price: its cost is unknown, never 0). A run started with these is indexed on change only
 * (`src/workflows/run/status.ts`); its first upsert comes with its first status change.
 */
export function startSearchAttributes(model: string): SearchAttributePair[] {
  return [
    { key: statusSearchAttribute, value: 'running' },
    { key: iterationsSearchAttribute, value: 0 },
    { key: modelSearchAttribute, value: model },
    ...(hasKnownPrice(model) ? [{ key: costSearchAttribute, value: 0 }] : []),
  ];
}
