import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

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

/** Name → type as the Temporal CLI's `--search-attribute NAME=TYPE` and operator commands spell it. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: ReadonlyArray<{ name: string; cliType: string }> = [
  { name: statusSearchAttribute.name, cliType: 'Keyword' },
  { name: iterationsSearchAttribute.name, cliType: 'Int' },
  { name: costSearchAttribute.name, cliType: 'Double' },
  { name: modelSearchAttribute.name, cliType: 'Keyword' },
];
