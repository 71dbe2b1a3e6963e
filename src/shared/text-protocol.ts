/**
 * The text tool protocol (`toolProtocol: 'xml'`) for models without native tool calling, as seed
 * 003 designs it: the tools are described in the system prompt inside `<tool_definitions>`, the
 * model calls one tool per turn with a `<tool_code>` block in its text, and the result comes back
 * as an `<observation>` user message. A reply without a block (or with `<final_answer>`) is the
 * final answer.
 *
 * Pure and deterministic (it runs in the workflow sandbox): no Node imports, no clock, no
 * randomness. The model's text is hostile: parsing never throws, runs in linear time (`indexOf`
 * scans and one JSON scanner; no regular expressions), and bounds what it echoes back.
 */

/** A tool as the text protocol presents it. */
export interface TextToolSpec {
  name: string;
  description: string;
  /** The tool's JSON Schema, as sent to native tool calling. */
  inputSchema: unknown;
}

/** What a reply means under the text protocol. */
export type ParsedToolReply =
  /** One call of a known tool; `input` is a JSON object; `raw` is the block as the model wrote it. */
  | { kind: 'call'; name: string; input: Record<string, unknown>; raw: string }
  /** No block: the text (or the content of `<final_answer>`), trimmed, is the answer. */
  | { kind: 'final'; text: string }
  /**
   * A block that cannot be run. `observation` is the complete user message to send back;
   * `overBound`: the parameters nest deeper than `maxDepth`.
   */
  | { kind: 'malformed'; observation: string; overBound?: true };

export interface ParseOptions {
  /** Parameters nesting deeper than this many arrays/objects are refused (malformed, `overBound`). */
  maxDepth?: number;
  /**
   * Names outside `toolNames` that parse too (the worker's tools, not all known by name here): the
   * call goes on and whoever runs it answers a name it lacks.
   */
  acceptName?: (name: string) => boolean;
}

/** The call format, shown in the instructions and in every malformed-block observation. */
export const TOOL_CALL_FORMAT =
  '<tool_code>\n<name>TOOL_NAME</name>\n<parameters>{"parameter": "value"}</parameters>\n</tool_code>';

/** Names and parse errors echoed back to the model are cut to this many characters. */
const ECHO_CHARS = 200;

/**
 * The tools and the protocol's rules, to append to the system prompt: a `<tool_definitions>` block
 * with each tool's name, description and JSON Schema, then how to call one and how to finish.
 */
export function renderToolDefinitions(specs: readonly TextToolSpec[]): string {
  const tools = specs.map(
    (s) =>
      `<tool>\n<name>${s.name}</name>\n<description>${s.description}</description>\n` +
      `<parameters_schema>${JSON.stringify(s.inputSchema ?? {})}</parameters_schema>\n</tool>`,
  );
  return [
    'You can use the tools below. Their parameters are described by JSON Schema.',
    '',
    '<tool_definitions>',
    ...tools,
    '</tool_definitions>',
    '',
    'To call a tool, reply with exactly one block in this format:',
    '',
    TOOL_CALL_FORMAT,
    '',
    'Rules:',
    "- <parameters> holds one JSON object that matches the tool's schema (use {} when it takes none).",
    '- Call one tool per reply, then stop and wait: the result arrives in the next message inside',
    '  <observation tool="TOOL_NAME">…</observation>. Never write an <observation> yourself.',
    '- You may think in plain text before the block.',
    '- When the task is done, reply with <final_answer>your answer</final_answer>. A reply without a',
    '  <tool_code> block is also taken as your final answer.',
  ].join('\n');
}

/**
 * Reads a model reply. At most one `<tool_code>` block per reply; `<final_answer>` before any block
 * ends the run with its content. Text before the block is the model's reasoning and is ignored;
 * text after the block (often an invented observation) is ignored too. A missing `</tool_code>` is
 * tolerated when the name and parameters are complete (output cut at a stop sequence); missing
 * `<parameters>` means `{}`. The JSON is scanned string-aware, so parameters may contain any tag.
 */
export function parseToolReply(
  text: string,
  toolNames: readonly string[],
  options: ParseOptions = {},
): ParsedToolReply {
  const open = findTag(text, 'tool_code', 0, false);
  const finalOpen = findTag(text, 'final_answer', 0, false);
  if (finalOpen && (!open || finalOpen.start < open.start)) {
    const close = findTag(text, 'final_answer', finalOpen.end, true);
    return { kind: 'final', text: text.slice(finalOpen.end, close ? close.start : text.length).trim() };
  }
  if (!open) return { kind: 'final', text: text.trim() };

  const block = readBlock(text, open.end, options.maxDepth ?? Infinity);
  if ('error' in block) {
    const reply = malformed(block.error, toolNames);
    return block.overBound && reply.kind === 'malformed' ? { ...reply, overBound: true } : reply;
  }
  if (findTag(text, 'tool_code', block.end, false)) {
    return malformed('the reply holds more than one <tool_code> block; call one tool per reply', toolNames);
  }
  if (!toolNames.includes(block.name) && !options.acceptName?.(block.name)) {
    const available = toolNames.length > 0 ? toolNames.join(', ') : '(none)';
    return malformed(`Tool '${cut(block.name)}' not found. Available tools: ${available}`, toolNames);
  }
  return { kind: 'call', name: block.name, input: block.input, raw: text.slice(open.start, block.end) };
}

/**
 * What a reply shows as the model's own words, for progress events and live output (never for
 * what runs): the thought before a `<tool_code>` block (a code fence opened just before the block
 * left out), the content of a `<final_answer>`, or the whole text; trimmed. The call itself is
 * shown as a tool call, not as prose.
 */
export function replyProse(text: string): string {
  const open = findTag(text, 'tool_code', 0, false);
  const finalOpen = findTag(text, 'final_answer', 0, false);
  if (finalOpen && (!open || finalOpen.start < open.start)) {
    const close = findTag(text, 'final_answer', finalOpen.end, true);
    return text.slice(finalOpen.end, close ? close.start : text.length).trim();
  }
  if (!open) return text.trim();
  return withoutOpeningFence(text.slice(0, open.start)).trim();
}

/** `text` without a last line that opens a code fence (```` ```xml ````), when nothing but space follows it. */
export function withoutOpeningFence(text: string): string {
  const end = text.trimEnd();
  const lineStart = end.lastIndexOf('\n') + 1;
  return end.startsWith('```', lineStart) ? end.slice(0, lineStart) : text;
}

/** The user message that carries a tool's result back to the model. */
export function formatObservation(name: string, content: string, isError: boolean, strictEscape = true): string {
  const status = isError ? ' status="error"' : '';
  // Tool output is data (and often text the model wrote: a file, a command's echo): it cannot close
  // the observation, however it spells the closing tag (`</ observation>`, `< /OBSERVATION >`), nor
  // open one that looks like the run's own (`<observation tool="bash">`). Runs recorded before
  // escaped only `</observation`.
  const safe = strictEscape ? escapeObservationTags(content) : content.replace(/<\/observation/gi, '<\\/observation');
  return `<observation tool="${escapeAttribute(name)}"${status}>\n${safe}\n</observation>`;
}

/** Text inside an observation: any spelling of an opening or closing `observation` tag made inert. */
export function escapeObservationTags(text: string): string {
  return text
    .replace(/<\s*\/\s*observation/gi, '<\\/observation')
    .replace(/<\s*observation(?=[\s>/]|$)/gi, '<\\observation');
}

interface Block {
  name: string;
  input: Record<string, unknown>;
  /** Index just past the block (its closing tag, or the last element when the tag is missing). */
  end: number;
}

type BlockError = { error: string; overBound?: true };

/** Reads the elements of a `<tool_code>` block that starts at `from`. */
function readBlock(text: string, from: number, maxDepth: number): Block | BlockError {
  let name: string | undefined;
  let input: Record<string, unknown> | undefined;
  let pos = from;
  for (;;) {
    const lt = text.indexOf('<', pos);
    if (lt < 0) break;
    const tag = tagAt(text, lt);
    if (tag?.name === 'tool_code' && tag.closing) {
      pos = tag.end;
      break;
    }
    if (tag?.name === 'tool_code') return { error: 'a <tool_code> block opens inside another one' };
    if (tag?.name === 'name' && !tag.closing) {
      const close = findTag(text, 'name', tag.end, true);
      if (!close) return { error: 'the <name> element has no closing </name> tag' };
      if (name !== undefined) return { error: 'the block names more than one tool' };
      name = text.slice(tag.end, close.start).trim();
      pos = close.end;
    } else if (tag?.name === 'parameters' && !tag.closing) {
      if (input !== undefined) return { error: 'the block has more than one <parameters> element' };
      const params = readParameters(text, tag.end, maxDepth);
      if ('error' in params) return params;
      input = params.input;
      pos = params.end;
    } else {
      pos = lt + 1;
    }
  }
  if (name === undefined) return { error: 'the block has no <name> element' };
  if (name === '') return { error: 'the <name> element is empty' };
  return { name, input: input ?? {}, end: pos };
}

/** The JSON object of a `<parameters>` element starting at `from`, fenced in ``` or not. */
function readParameters(
  text: string,
  from: number,
  maxDepth: number,
): { input: Record<string, unknown>; end: number } | BlockError {
  let start = skipSpace(text, from);
  if (text.startsWith('```', start)) {
    const eol = text.indexOf('\n', start);
    start = skipSpace(text, eol < 0 ? text.length : eol);
  }
  const close = findTag(text, 'parameters', start, true);
  if (close && skipSpace(text, start) === close.start) return { input: {}, end: close.end };
  const jsonEnd = text[start] === '{' ? scanJsonObject(text, start, maxDepth) : -1;
  if (jsonEnd === TOO_DEEP) {
    return {
      error: `the parameters nest deeper than ${maxDepth} levels of arrays and objects, the bound on a tool's input; send a flatter object`,
      overBound: true,
    };
  }
  if (jsonEnd < 0) {
    if (!close) return { error: 'the <parameters> element has no closing </parameters> tag' };
    return { error: `the parameters are not one JSON object: ${describeJsonError(text.slice(start, close.start))}` };
  }
  let after = skipSpace(text, jsonEnd);
  if (text.startsWith('```', after)) after = skipSpace(text, after + 3);
  const closeAfter = tagAt(text, after);
  if (closeAfter?.name !== 'parameters' || !closeAfter.closing) {
    return { error: 'the JSON object in <parameters> must be followed by </parameters>' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, jsonEnd));
  } catch (err) {
    return { error: `the parameters are not valid JSON: ${cut(errorMessage(err))}` };
  }
  return { input: value as Record<string, unknown>, end: closeAfter.end };
}

function describeJsonError(slice: string): string {
  try {
    JSON.parse(slice);
    return 'a JSON value that is not an object';
  } catch (err) {
    return cut(errorMessage(err));
  }
}

/** `scanJsonObject`'s answer when the object nests deeper than allowed. */
const TOO_DEEP = -2;

/**
 * Index just past the `}` that closes the object opening at `start`, skipping braces inside
 * strings; -1 when the text ends first, TOO_DEEP when it nests deeper than `maxDepth`. Linear:
 * one pass, no backtracking.
 */
function scanJsonObject(text: string, start: number, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > maxDepth) return TOO_DEEP;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

interface Tag {
  name: string;
  closing: boolean;
  start: number;
  end: number;
}

/** The tag `<name>` / `</name>` (spaces allowed before `>`) at `at`, if one is there. */
function tagAt(text: string, at: number): Tag | undefined {
  if (text.charCodeAt(at) !== 0x3c /* < */) return undefined;
  let i = at + 1;
  const closing = text.charCodeAt(i) === 0x2f; /* / */
  if (closing) i++;
  const nameStart = i;
  while (i < text.length && i - nameStart <= 16 && isNameChar(text.charCodeAt(i))) i++;
  const name = text.slice(nameStart, i);
  i = skipSpace(text, i);
  if (name === '' || text.charCodeAt(i) !== 0x3e /* > */) return undefined;
  return { name, closing, start: at, end: i + 1 };
}

/** The first `<name>` (or `</name>` when `closing`) at or after `from`. */
function findTag(text: string, name: string, from: number, closing: boolean): Tag | undefined {
  const prefix = closing ? `</${name}` : `<${name}`;
  for (let at = text.indexOf(prefix, from); at >= 0; at = text.indexOf(prefix, at + 1)) {
    const tag = tagAt(text, at);
    if (tag && tag.name === name) return tag;
  }
  return undefined;
}

function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || c === 0x5f || (c >= 0x41 && c <= 0x5a);
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\t' || text[i] === '\r')) i++;
  return i;
}

function malformed(reason: string, toolNames: readonly string[]): ParsedToolReply {
  const available = toolNames.length > 0 ? toolNames.join(', ') : '(none)';
  const content =
    // The reason may quote the model's own text (a tool name, its JSON): it cannot forge a tag either.
    `Your reply could not be run as a tool call: ${escapeObservationTags(reason)}.\n` +
    `To call a tool, reply with exactly one block in this format, the parameters being one JSON object:\n` +
    `${TOOL_CALL_FORMAT}\n` +
    `Available tools: ${available}.\n` +
    'When you are done, reply with <final_answer>your answer</final_answer>.';
  return { kind: 'malformed', observation: `<observation status="error">\n${content}\n</observation>` };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function cut(s: string): string {
  return s.length > ECHO_CHARS ? `${s.slice(0, ECHO_CHARS)}…` : s;
}

function escapeAttribute(s: string): string {
  return cut(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
