import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../shared/search-attributes';

type OperatorService = temporal.api.operatorservice.v1.OperatorService;
const { IndexedValueType } = temporal.api.enums.v1;

const TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Int: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  Double: IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
};

/**
 * Registers durable-agent's search attributes in the namespace when they are missing. Runs upsert
 * them every iteration, and a server that does not know them fails those workflow tasks, so every
 * worker checks at start: a dev server started by an older version, or a cluster nobody set up,
 * then works at once. Returns the names it added; throws when it cannot (no operator permission).
 */
export async function ensureSearchAttributes(operator: OperatorService, namespace: string): Promise<string[]> {
  const { customAttributes } = await operator.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTE_DEFINITIONS.filter((d) => !(d.name in (customAttributes ?? {})));
  if (missing.length === 0) return [];
  await operator.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map((d) => [d.name, TYPES[d.cliType] ?? IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD]),
    ),
  });
  return missing.map((d) => d.name);
}
