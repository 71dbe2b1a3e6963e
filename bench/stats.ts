/** Nearest-rank percentile (p in 0..100) of a non-empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export interface Distribution {
  n: number;
  median: number;
  p95: number;
  mean: number;
}

export function distribution(values: readonly number[]): Distribution {
  return {
    n: values.length,
    median: median(values),
    p95: percentile(values, 95),
    mean: values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN,
  };
}

export const MiB = 1024 * 1024;

export function mib(bytes: number): string {
  return Number.isFinite(bytes) ? `${(bytes / MiB).toFixed(2)} MiB` : 'n/a';
}

export function ms(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** A plain text table: the first row is the header; columns are left-aligned, padded to fit. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const [header, ...body] = rows;
  if (!header) return '';
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
