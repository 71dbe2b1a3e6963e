import type { FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';

/**
 * Whether a file is text the tools may rewrite: valid UTF-8 without NUL bytes. edit_file and
 * write_file refuse anything else, because decoding other bytes as UTF-8 and encoding them back
 * would replace every byte that is not UTF-8 with U+FFFD (EF BF BD) — bytes the model never saw.
 */

/** Bytes read at a time when a file is checked without being loaded whole. */
const SCAN_CHUNK_BYTES = 1024 * 1024;

/** Why a file is not rewritable text, or `undefined` when it is. */
export type TextProblem = { kind: 'binary'; offset: number } | { kind: 'not-utf8'; offset: number };

/** Length of the UTF-8 sequence a lead byte starts, and the allowed range of its second byte. */
function sequence(lead: number): { length: number; low: number; high: number } | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return { length: 2, low: 0x80, high: 0xbf };
  if (lead === 0xe0) return { length: 3, low: 0xa0, high: 0xbf };
  if (lead === 0xed) return { length: 3, low: 0x80, high: 0x9f }; // no UTF-16 surrogates
  if (lead >= 0xe1 && lead <= 0xef) return { length: 3, low: 0x80, high: 0xbf };
  if (lead === 0xf0) return { length: 4, low: 0x90, high: 0xbf };
  if (lead >= 0xf1 && lead <= 0xf3) return { length: 4, low: 0x80, high: 0xbf };
  if (lead === 0xf4) return { length: 4, low: 0x80, high: 0x8f }; // nothing above U+10FFFF
  return undefined;
}

/**
 * Scan `bytes` (starting at file offset `base`). Returns the problem found, or the number of bytes
 * at the end that start a sequence completed by the next chunk.
 */
function scan(bytes: Buffer, base: number, last: boolean): TextProblem | { carry: number } {
  const nul = bytes.indexOf(0);
  const fast = nul === -1 && isUtf8(bytes);
  if (fast) return { carry: 0 };
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i] as number;
    if (lead === 0) return { kind: 'binary', offset: base + i };
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    const seq = sequence(lead);
    if (!seq) return { kind: 'not-utf8', offset: base + i };
    for (let k = 1; k < seq.length; k++) {
      if (i + k >= bytes.length) return last ? { kind: 'not-utf8', offset: base + i } : { carry: bytes.length - i };
      const b = bytes[i + k] as number;
      const [low, high] = k === 1 ? [seq.low, seq.high] : [0x80, 0xbf];
      if (b < low || b > high) return { kind: 'not-utf8', offset: base + i };
    }
    i += seq.length;
  }
  return { carry: 0 };
}

/** Check a whole buffer. */
export function textProblem(bytes: Buffer): TextProblem | undefined {
  const result = scan(bytes, 0, true);
  return 'kind' in result ? result : undefined;
}

/** Check an open file from its start, a chunk at a time, without loading it whole. */
export async function fileTextProblem(handle: FileHandle): Promise<TextProblem | undefined> {
  const buffer = Buffer.alloc(SCAN_CHUNK_BYTES + 4);
  let carry = 0;
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, carry, SCAN_CHUNK_BYTES, position);
    const chunk = buffer.subarray(0, carry + bytesRead);
    const result = scan(chunk, position - carry, bytesRead === 0);
    if ('kind' in result) return result;
    if (bytesRead === 0) return undefined;
    position += bytesRead;
    chunk.copy(buffer, 0, chunk.length - result.carry);
    carry = result.carry;
  }
}

/** The refusal a tool gives for a file that is not rewritable text, naming the rule and the byte. */
export function describeTextProblem(shown: string, problem: TextProblem, tool: 'edit_file' | 'write_file'): string {
  const why =
    problem.kind === 'binary'
      ? `it is a binary file (it has a NUL byte at byte offset ${problem.offset})`
      : `it is not valid UTF-8 (the first byte that is not UTF-8 is at byte offset ${problem.offset})`;
  const rule =
    tool === 'edit_file'
      ? 'edit_file only edits UTF-8 text without NUL bytes, so that no byte it does not change is altered; ' +
        'use bash for other files.'
      : 'write_file does not overwrite binary or non-UTF-8 files, whose content read_file cannot show; ' +
        'if you mean to replace it, delete it with bash first.';
  return `${tool} refused to change '${shown}': ${why}. ${rule}`;
}
