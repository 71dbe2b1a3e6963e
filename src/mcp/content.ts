import * as path from 'node:path';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { SPILL_DIR, trySpillText } from '../tools/spill';
import { replaceFile, withLocated } from '../safe-fs';
import { truncateTail } from '../tools/text';
import { cutPrefix } from '../shared/well-formed';

/** Binary content larger than this is not saved (it is described only). */
const MAX_SAVED_BYTES = 32 * 1024 * 1024;
/** Content blocks one result may have; the rest are counted, not shown. */
const MAX_BLOCKS = 100;
const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'audio/ogg': 'ogg',
  'application/pdf': 'pdf',
};

type Block = Record<string, unknown>;

/**
 * An MCP `tools/call` result as the text a tool result carries: text blocks as they are; images,
 * audio and binary resources saved to the workspace's spill folder and described (type, size,
 * path), never put raw into history; resource links named; structured content as JSON when there
 * is no text. Output is capped like every tool's, the whole text spilled to a file.
 */
export async function resultText(
  result: { content?: unknown; structuredContent?: unknown; isError?: unknown },
  saveTo: { workspace: string; toolUseId: string },
): Promise<{ content: string; isError: boolean }> {
  const blocks = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const parts: string[] = [];
  for (const [i, raw] of blocks.slice(0, MAX_BLOCKS).entries()) {
    const b = (typeof raw === 'object' && raw !== null ? raw : {}) as Block;
    parts.push(await blockText(b, i, saveTo));
  }
  if (blocks.length > MAX_BLOCKS) parts.push(`[${blocks.length - MAX_BLOCKS} more content blocks not shown]`);
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push(safeJson(result.structuredContent));
  }
  const isError = result.isError === true;
  const text = parts.join('\n') || (isError ? 'Error: the tool failed and said nothing.' : '(no output)');
  return { content: await capped(text, saveTo), isError };
}

async function blockText(b: Block, i: number, saveTo: { workspace: string; toolUseId: string }): Promise<string> {
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? b.text : '';
    case 'image':
    case 'audio':
      return saved(String(b.type), b.mimeType, b.data, i, saveTo);
    case 'resource_link':
      return `[resource link: ${str(b.uri)}${b.name ? ` (${str(b.name)})` : ''}${b.mimeType ? `, ${str(b.mimeType)}` : ''}]`;
    case 'resource': {
      const r = (typeof b.resource === 'object' && b.resource !== null ? b.resource : {}) as Block;
      if (typeof r.text === 'string') return `[resource ${str(r.uri)}]\n${r.text}`;
      return saved(`resource ${str(r.uri)}`, r.mimeType, r.blob, i, saveTo);
    }
    default:
      return `[content of type '${str(b.type)}' not shown]`;
  }
}

/** Saves base64 content to the spill folder; the model gets a line saying what and where. */
async function saved(
  what: string,
  mimeType: unknown,
  data: unknown,
  i: number,
  saveTo: { workspace: string; toolUseId: string },
): Promise<string> {
  const mime = typeof mimeType === 'string' ? mimeType.slice(0, 100) : 'application/octet-stream';
  if (typeof data !== 'string') return `[${what}, ${mime}: no data]`;
  const bytes = Buffer.from(data, 'base64');
  if (bytes.length > MAX_SAVED_BYTES) return `[${what}, ${mime}, ${bytes.length} bytes: too large to save]`;
  const safeId =
    String(saveTo.toolUseId)
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(0, 200) || 'output';
  const relative = path.join(SPILL_DIR, `${safeId}-${i}.${EXTENSIONS[mime] ?? 'bin'}`);
  try {
    await withLocated(saveTo.workspace, relative, { createDirs: true, followLinks: false }, (located) =>
      replaceFile(located, bytes),
    );
    return `[${what}, ${mime}, ${bytes.length} bytes, saved to ${relative}]`;
  } catch (err) {
    return `[${what}, ${mime}, ${bytes.length} bytes: could not be saved (${cutPrefix((err as Error).message, 200)})]`;
  }
}

async function capped(text: string, saveTo: { workspace: string; toolUseId: string }): Promise<string> {
  if (text.length <= MAX_TOOL_OUTPUT_CHARS) return text;
  const spilled = await trySpillText(saveTo.workspace, saveTo.toolUseId, text);
  const note =
    'path' in spilled
      ? `\n[The full output (${text.length} characters) is saved in ${spilled.path}: ` +
        'page through it with read_file (offset/limit) or search it with grep.]'
      : `\n[${cutPrefix(spilled.error, 500)}]`;
  return truncateTail(text, MAX_TOOL_OUTPUT_CHARS - note.length) + note;
}

function str(v: unknown): string {
  return cutPrefix(typeof v === 'string' ? v : String(v), 300);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return '[structured content that is not JSON]';
  }
}
