import type { Usage } from './messages';

/** USD per million tokens. */
export interface Price {
  input: number;
  cacheWrite: number;
  cacheRead: number;
  output: number;
}

interface PriceEntry {
  /** Matches the model id exactly or, unless `exact`, as a prefix followed by `-` (dated snapshots). */
  model: string;
  /** Match the id only exactly: OpenAI's dated snapshots do not all share their alias's price. */
  exact?: boolean;
  price: Price;
  /** A second price that applies when one request's total input exceeds `aboveInputTokens`. */
  longContext?: { aboveInputTokens: number; price: Price };
}

const p = (input: number, cacheWrite: number, cacheRead: number, output: number): Price => ({
  input,
  cacheWrite,
  cacheRead,
  output,
});

function openai(names: string[], price: Price): PriceEntry[] {
  return names.map((name) => ({ model: `openai:${name}`, price, exact: true }));
}

/** The one price table (docs/models.md). Unknown models have no price; their cost is unknown, never 0. */
export const PRICE_TABLE: readonly PriceEntry[] = [
  { model: 'claude-opus-5-5', price: p(4, 5, 0.2, 20) },
  { model: 'claude-sonnet-5-5', price: p(2, 2.5, 0.1, 10) },
  {
    model: 'claude-haiku-5-5',
    price: p(0.1, 0.125, 0.01, 0.5),
    longContext: { aboveInputTokens: 100_000, price: p(0.5, 0.625, 0.05, 2.5) },
  },
  { model: 'claude-haiku-4-5', price: p(1, 1.25, 0.1, 5) },
  { model: 'claude-sonnet-4-6', price: p(3, 3.75, 0.3, 15) },
  { model: 'claude-opus-4', price: p(5, 6.25, 0.5, 25) },
  // OpenAI's list prices on api.openai.com (no charge for cache writes, so cacheWrite = input). Only
  // models whose price is certain are listed, exactly: any other `openai:` model's cost is unknown.
  // A server at OPENAI_BASE_URL serving a model under one of these names is priced as OpenAI's.
  ...openai(['gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'], p(2.5, 2.5, 1.25, 10)),
  ...openai(['gpt-4o-mini', 'gpt-4o-mini-2024-07-18'], p(0.15, 0.15, 0.075, 0.6)),
  ...openai(['gpt-4.1', 'gpt-4.1-2025-04-14'], p(2, 2, 0.5, 8)),
  ...openai(['gpt-4.1-mini', 'gpt-4.1-mini-2025-04-14'], p(0.4, 0.4, 0.1, 1.6)),
  ...openai(['gpt-4.1-nano', 'gpt-4.1-nano-2025-04-14'], p(0.1, 0.1, 0.025, 0.4)),
  // Offline models run locally and are genuinely free.
  { model: 'offline', price: p(0, 0, 0, 0) },
  { model: 'scripted', price: p(0, 0, 0, 0) },
];

function findEntry(model: string): PriceEntry | undefined {
  return PRICE_TABLE.find((e) => model === e.model || (!e.exact && model.startsWith(`${e.model}-`)));
}

export function hasKnownPrice(model: string): boolean {
  return findEntry(model) !== undefined;
}

/** Cost in USD of one request's usage, or `null` when the model's price is unknown. */
export function costOf(model: string, usage: Usage): number | null {
  const entry = findEntry(model);
  if (!entry) return null;
  const totalInput = usage.inputTokens + usage.cacheCreationInputTokens + usage.cacheReadInputTokens;
  const price =
    entry.longContext && totalInput > entry.longContext.aboveInputTokens ? entry.longContext.price : entry.price;
  return (
    (usage.inputTokens * price.input +
      usage.cacheCreationInputTokens * price.cacheWrite +
      usage.cacheReadInputTokens * price.cacheRead +
      usage.outputTokens * price.output) /
    1_000_000
  );
}
