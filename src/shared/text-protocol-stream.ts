import { withoutOpeningFence } from './text-protocol';

/**
 * The model's words of a text-protocol reply (`toolProtocol: 'xml'`) as it streams, for live
 * output: the thought before a `<tool_code>` block, the content of a `<final_answer>`, and nothing
 * of the block or of what follows it. What it passes on is always a prefix of the reply's prose as
 * `replyProse` reads the whole reply, give or take white space, so a follower that completes the
 * live text from the events never meets a text that contradicts what it printed.
 *
 * A delta is held back only while it may still begin a tag (`<tool_c…`) or is the code fence
 * line right before a block; everything else passes at once. Linear in the stream's length.
 */
export class ProseStream {
  private state: 'prose' | 'answer' | 'hidden' = 'prose';
  private held = '';

  constructor(private readonly emit: (delta: string) => void) {}

  push(delta: string): void {
    if (this.state === 'hidden' || delta.length === 0) return;
    this.held += delta;
    if (this.state === 'prose') this.prose();
    if (this.state === 'answer') this.answer();
  }

  private prose(): void {
    const tag = firstTag(this.held, ['tool_code', 'final_answer'], false);
    if (tag) {
      const before = this.held.slice(0, tag.start);
      this.pass(tag.name === 'tool_code' ? withoutOpeningFence(before) : before);
      this.held = this.held.slice(tag.end);
      this.state = tag.name === 'tool_code' ? 'hidden' : 'answer';
      if (this.state === 'hidden') this.held = '';
      return;
    }
    // A fence line counts as the block's when only a tag's start follows it.
    const tagStart = partialTagStart(this.held, ['tool_code', 'final_answer'], false);
    const keep = Math.min(tagStart, fenceStart(this.held.slice(0, tagStart)));
    this.pass(this.held.slice(0, keep));
    this.held = this.held.slice(keep);
  }

  private answer(): void {
    const close = firstTag(this.held, ['final_answer'], true);
    if (close) {
      this.pass(this.held.slice(0, close.start));
      this.held = '';
      this.state = 'hidden';
      return;
    }
    const keep = partialTagStart(this.held, ['final_answer'], true);
    this.pass(this.held.slice(0, keep));
    this.held = this.held.slice(keep);
  }

  private pass(text: string): void {
    if (text) this.emit(text);
  }
}

interface Found {
  name: string;
  start: number;
  end: number;
}

/** The first complete `<name>` (or `</name>`) tag of one of `names`, spaces allowed before `>`. */
function firstTag(text: string, names: string[], closing: boolean): Found | undefined {
  let best: Found | undefined;
  for (const name of names) {
    const prefix = closing ? `</${name}` : `<${name}`;
    for (let at = text.indexOf(prefix); at >= 0; at = text.indexOf(prefix, at + 1)) {
      let i = at + prefix.length;
      while (i < text.length && isSpace(text[i]!)) i++;
      if (text[i] === '>') {
        if (!best || at < best.start) best = { name, start: at, end: i + 1 };
        break;
      }
    }
  }
  return best;
}

/**
 * Where a tag of one of `names` may be starting at the end of `text` (a `<` followed only by the
 * start of such a tag, or by its whole name and spaces); `text.length` when none is.
 */
function partialTagStart(text: string, names: string[], closing: boolean): number {
  const lt = text.lastIndexOf('<');
  if (lt < 0) return text.length;
  const rest = text.slice(lt);
  for (const name of names) {
    const full = closing ? `</${name}` : `<${name}`;
    if (full.startsWith(rest)) return lt;
    if (rest.startsWith(full) && [...rest.slice(full.length)].every(isSpace)) return lt;
  }
  return text.length;
}

/** The start of a last line that opens a code fence, with only space after it; `text.length` when there is none. */
function fenceStart(text: string): number {
  let end = text.length;
  while (end > 0 && isSpace(text[end - 1]!)) end--;
  const lineStart = text.lastIndexOf('\n', end - 1) + 1;
  // A line still being written may be a fence: one or two backquotes so far count too.
  const line = text.slice(lineStart, end);
  if (line.startsWith('```') || (line.length > 0 && line.length < 3 && /^`+$/.test(line))) return lineStart;
  return text.length;
}

function isSpace(c: string): boolean {
  return c === ' ' || c === '\n' || c === '\t' || c === '\r';
}
