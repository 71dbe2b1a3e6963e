/**
 * The run pages' JSON, kept so that reopening a run costs no second history read: the key names
 * the execution and its history length, so an entry is never stale (history only grows). Bounded
 * twice (how many runs, how many bytes), least recently used first out; concurrent reads of one key
 * share one history read.
 */

/** Closed runs kept. */
export const MAX_CACHED_RUNS = 64;
/** Their JSON, all together. */
export const MAX_CACHED_BYTES = 64 * 1024 * 1024;

export class ViewCache {
  private readonly entries = new Map<string, string>();
  private readonly reading = new Map<string, Promise<string>>();
  private bytes = 0;

  constructor(
    private readonly maxRuns = MAX_CACHED_RUNS,
    private readonly maxBytes = MAX_CACHED_BYTES,
  ) {}

  /** The cached JSON, or `read()`'s (one read at a time per key, shared by concurrent callers). */
  async get(key: string, read: () => Promise<string>): Promise<string> {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const pending = this.reading.get(key);
    if (pending) return pending;
    const promise = read()
      .then((json) => {
        this.put(key, json);
        return json;
      })
      .finally(() => this.reading.delete(key));
    this.reading.set(key, promise);
    return promise;
  }

  get size(): { runs: number; bytes: number } {
    return { runs: this.entries.size, bytes: this.bytes };
  }

  private put(key: string, json: string): void {
    // A view larger than the whole budget is served, not kept.
    if (json.length > this.maxBytes) return;
    this.entries.set(key, json);
    this.bytes += json.length;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxRuns && this.bytes <= this.maxBytes) break;
      this.remove(oldest);
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.bytes -= entry.length;
    this.entries.delete(key);
  }
}
