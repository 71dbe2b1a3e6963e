/**
 * What the offline demo model (offline.ts) reads from its tools' output and how it writes its
 * command and sizes: pure helpers.
 */

export interface GlobListing {
  files: string[];
  /** Matches the tool found but did not list (its "… and N more files" note). */
  unlisted: number;
}

/** Paths from the glob tool's output: one per line, with notes such as "No files match …" ignored. */
export function parseGlobOutput(output: string): GlobListing {
  const trimmed = output.trim();
  if (trimmed.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed))
        return { files: parsed.filter((p): p is string => typeof p === 'string'), unlisted: 0 };
    } catch {
      // not JSON: read it as lines
    }
  }
  let unlisted = 0;
  const files: string[] = [];
  for (const raw of trimmed.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const more = /^(?:…|\.\.\.)\s*and (\d+) more/i.exec(line);
    if (more) {
      unlisted += Number(more[1]);
      continue;
    }
    if (/^no (files|matches)\b/i.test(line) || /^(exit code|error)\b/i.test(line) || /^[([…]/.test(line)) continue;
    files.push(line);
  }
  return { files, unlisted };
}

export interface MeasuredFile {
  path: string;
  bytes: number;
}

/** Sizes from `wc -c` output (`  1234 path` per line), without the `total` line. */
export function parseWcOutput(output: string, measured: readonly string[] = []): MeasuredFile[] {
  const sizes: MeasuredFile[] = [];
  for (const line of output.split('\n')) {
    const match = /^\s*(\d+)\s+(.+?)\s*$/.exec(line);
    if (!match) continue;
    const path = match[2]!;
    if (path === 'total' && !measured.includes('total')) continue;
    sizes.push({ path, bytes: Number(match[1]) });
  }
  return sizes;
}

/** Single-quote for POSIX shells: `it's` → `'it'\''s'`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export function formatBytes(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < 1024) return exact;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]} (${exact})`;
}
