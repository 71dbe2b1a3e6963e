import { cutPrefix, cutSuffix } from '../shared/well-formed';
import { MAX_SPILL_BYTES, type StreamingSpill } from './spill';

/** Why the output could not be saved stays short, so the note never crowds out the output. */
const MAX_SPILL_NOTE_CHARS = 500;

/**
 * Keeps the first and last parts of a stream of text and counts the rest, so a command that prints
 * gigabytes costs bounded memory, and the model sees both how it started and how it ended. The
 * head and the tail are cut on code point boundaries (never half a surrogate pair).
 */
export class OutputCollector {
  private head = '';
  private tail = '';
  private headClosed = false;
  private total = 0;
  /** Everything seen so far, kept only until the output first overflows and is written to the spill. */
  private pending: string[] | undefined = [];

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
    private readonly spill?: StreamingSpill,
  ) {}

  push(text: string): void {
    if (!text) return;
    this.total += text.length;
    if (this.spill) {
      if (this.pending) {
        this.pending.push(text);
        if (this.total > this.headMax + this.tailMax) {
          for (const part of this.pending) this.spill.write(part);
          this.pending = undefined;
        }
      } else {
        this.spill.write(text);
      }
    }
    if (!this.headClosed) {
      const kept = cutPrefix(text, this.headMax - this.head.length);
      this.head += kept;
      text = text.slice(kept.length);
      // Whatever did not fit (a surrogate pair with room for only its first half included) starts
      // the tail, and nothing goes to the head after it: the order of the output is kept.
      if (text) this.headClosed = true;
    }
    if (!text) return;
    this.tail += text;
    // Trim lazily (at twice the size) so repeated small writes don't copy the buffer every time.
    if (this.tail.length > 2 * this.tailMax) this.tail = cutSuffix(this.tail, this.tailMax);
  }

  get length(): number {
    return this.total;
  }

  toString(): string {
    const tail = cutSuffix(this.tail, this.tailMax);
    const omitted = this.total - this.head.length - tail.length;
    if (omitted <= 0) return this.head + this.tail;
    const where = this.spill?.started
      ? ` The full output${this.spill.capped ? ` (its first ${MAX_SPILL_BYTES} bytes)` : ''} is saved in ` +
        `${this.spill.relativePath}: page through it with read_file (offset/limit) or search it with grep.`
      : this.spill?.error
        ? ` ${cutPrefix(this.spill.error, MAX_SPILL_NOTE_CHARS)}.`
        : '';
    return `${this.head}\n\n[… output truncated: ${omitted} of ${this.total} characters omitted.${where} …]\n\n${tail}`;
  }
}
