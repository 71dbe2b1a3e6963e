/**
 * The offline demo model (`offline-demo`): what a newcomer without an API key runs, so
 * `npm start -- "List the TypeScript files here and tell me which one is largest"` does real work.
 *
 * A small deterministic rule-based agent. It is stateless: every decision comes from the
 * conversation it receives, so it behaves the same after a worker restart or on another worker.
 *   turn 1: infer a glob from the prompt and call `glob`;
 *   turn 2: if files were found, call `bash` with `wc -c -- <files…> | sort -rn | head` to measure
 *           every one it was shown (the glob tool skips what .gitignore excludes);
 *   final:  answer in text: what it found, the largest file and its size (only "the largest" when it
 *           measured every match), and that it is the demo model.
 * Missing tools and tool errors end the run with a text answer that says so. With
 * `tool_choice: none` (the max-iterations summary) it answers with text only. A run with
 * `outputSchema` gets its answer as JSON built from the schema (offline-schema-answer.ts); a
 * corrective message about that answer is not a new task.
 */
import type { ContentBlock, Message, ModelRequest, ModelResponse, ToolSpec, Usage } from '../shared/messages';
import { cutChars } from '../shared/bounds';
import { OUTPUT_CORRECTION_PREFIX } from '../shared/output-schema';
import { cancellationFailure } from './errors';
import {
  formatBytes,
  parseGlobOutput,
  parseWcOutput,
  shellQuote,
  type GlobListing,
  type MeasuredFile,
} from './offline-output';
import { answerForSchema, type OfflineFacts } from './offline-schema-answer';

export {
  formatBytes,
  parseGlobOutput,
  parseWcOutput,
  shellQuote,
  type GlobListing,
  type MeasuredFile,
} from './offline-output';
import type { ModelCallContext, ModelProvider } from './types';

/**
 * At most this many files are measured in one `wc -c` call: every path the glob tool lists (it lists
 * at most 1000).
 */
export const OFFLINE_MAX_MEASURED_FILES = 1000;
/**
 * The measuring command stays under this many characters: bash gets it as one argument, which Linux
 * caps at 128 KiB. Files past it are not measured (and the answer then names no "largest").
 */
const MAX_COMMAND_CHARS = 100_000;
/** At most this many files are listed in the final answer. */
const LISTED_FILES = 15;

const DISCLAIMER =
  'This answer comes from the offline demo model, a small rule-based stand-in that runs without an API key: ' +
  'it can only list files and measure them. Set ANTHROPIC_API_KEY to run the same durable loop with Claude.';

export class OfflineDemoModel implements ModelProvider {
  readonly name = 'offline';

  async call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse> {
    if (ctx.signal.aborted) throw cancellationFailure(ctx.signal);
    const turn = decideOfflineTurn(request);
    return {
      id: `msg_offline_${hash(JSON.stringify(request.messages))}`,
      model: request.model,
      content: turn.content,
      stopReason: turn.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: estimateUsage(request, turn.content),
    };
  }
}

// ---- the plan: what to look for -------------------------------------------------------------

export interface SearchPlan {
  pattern: string;
  /** How the answer names the files: "TypeScript files". */
  label: string;
}

const LANGUAGES: Array<{ test: RegExp; pattern: string; label: string }> = [
  { test: /\btype\s?script\b|\btsx?\b|\.tsx?\b/i, pattern: '**/*.ts', label: 'TypeScript files' },
  { test: /\bjava\s?script\b|\bjsx?\b|\.[mc]?js\b/i, pattern: '**/*.{js,mjs,cjs}', label: 'JavaScript files' },
  { test: /\bpython\b|\.py\b/i, pattern: '**/*.py', label: 'Python files' },
  {
    test: /\bgolang\b|\bgo\s+(files?|code|sources?|packages?|modules?)\b|\.go\b/i,
    pattern: '**/*.go',
    label: 'Go files',
  },
  { test: /\brust\b|\.rs\b/i, pattern: '**/*.rs', label: 'Rust files' },
  { test: /\bmarkdown\b|\.md\b|\breadmes?\b|\bdocs\b|\bdocumentation\b/i, pattern: '**/*.md', label: 'Markdown files' },
  { test: /\bjava\b(?!\s?script)|\.java\b/i, pattern: '**/*.java', label: 'Java files' },
  { test: /\bruby\b|\.rb\b/i, pattern: '**/*.rb', label: 'Ruby files' },
  { test: /\bc\+\+|\bcpp\b/i, pattern: '**/*.{cpp,cc,cxx,hpp,h}', label: 'C++ files' },
  { test: /\b(shell|bash) scripts?\b|\.sh\b/i, pattern: '**/*.sh', label: 'shell scripts' },
  { test: /\bjson\b/i, pattern: '**/*.json', label: 'JSON files' },
  { test: /\bya?ml\b/i, pattern: '**/*.{yml,yaml}', label: 'YAML files' },
  { test: /\bcss\b/i, pattern: '**/*.css', label: 'CSS files' },
  { test: /\bhtml\b/i, pattern: '**/*.html', label: 'HTML files' },
];

/** Infer what to look for from the prompt: an explicit glob, an extension, a language, or everything. */
export function planFromPrompt(prompt: string): SearchPlan {
  const explicit = /(?:^|[\s`"'(])([\w.\-/{},]*\*[\w.\-/*{},]*)/.exec(prompt)?.[1];
  if (explicit && /\w/.test(explicit)) return { pattern: explicit, label: 'files' };
  const extension = /(?:^|\s)\*?\.([a-z0-9]{1,8}) files\b/i.exec(prompt)?.[1];
  if (extension) return { pattern: `**/*.${extension.toLowerCase()}`, label: `.${extension.toLowerCase()} files` };
  const language = LANGUAGES.find((l) => l.test.test(prompt));
  if (language) return { pattern: language.pattern, label: language.label };
  return { pattern: '**/*', label: 'files' };
}

// ---- reading the conversation ---------------------------------------------------------------

interface ToolExchange {
  input: Record<string, unknown>;
  /** `undefined` when the result has not arrived (should not happen in a well-formed conversation). */
  result?: { content: string; isError: boolean };
}

interface ConversationState {
  prompt: string;
  glob?: ToolExchange;
  bash?: ToolExchange;
}

function textOfContent(content: Message['content']): string {
  if (typeof content === 'string') return content;
  return content
    .filter((b) => b.type === 'text' && typeof (b as { text?: unknown }).text === 'string')
    .map((b) => (b as { text: string }).text)
    .join('\n');
}

function isTaskMessage(message: Message): boolean {
  if (message.role !== 'user') return false;
  const text = textOfContent(message.content).trim();
  return text !== '' && !text.startsWith(OUTPUT_CORRECTION_PREFIX);
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
      .join('\n');
  }
  return '';
}

/**
 * The task is the latest user message with text (tool results carry none); the glob and bash
 * exchanges that follow it are the work done on it so far.
 */
function readConversation(messages: Message[]): ConversationState {
  let taskIndex = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isTaskMessage(messages[i]!)) {
      taskIndex = i;
      break;
    }
  }
  const state: ConversationState = { prompt: taskIndex >= 0 ? textOfContent(messages[taskIndex]!.content) : '' };
  const byId = new Map<string, ToolExchange>();
  for (const message of messages.slice(taskIndex + 1)) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (message.role === 'assistant' && block.type === 'tool_use') {
        const use = block as { id?: unknown; name?: unknown; input?: unknown };
        const exchange: ToolExchange = { input: isRecord(use.input) ? use.input : {} };
        if (typeof use.id === 'string') byId.set(use.id, exchange);
        if (use.name === 'glob') state.glob = exchange;
        if (use.name === 'bash') state.bash = exchange;
      }
      if (message.role === 'user' && block.type === 'tool_result') {
        const result = block as { tool_use_id?: unknown; content?: unknown; is_error?: unknown };
        const exchange = typeof result.tool_use_id === 'string' ? byId.get(result.tool_use_id) : undefined;
        if (exchange) exchange.result = { content: toolResultText(result.content), isError: result.is_error === true };
      }
    }
  }
  return state;
}

// ---- deciding the turn ----------------------------------------------------------------------

export interface OfflineTurn {
  content: ContentBlock[];
}

/** The whole policy: a pure function of the request. */
/**
 * A summary request's conversation without its closing instruction; the task is the user message before
 * it. The instruction is a user message of its own, or (the `summarizeRun` activity's way) a text block
 * merged into a trailing turn of tool results, which are kept: they are the last work done.
 */
function withoutInstruction(messages: Message[]): Message[] {
  const last = messages[messages.length - 1];
  if (messages.length <= 1 || !last || !isTaskMessage(last)) return messages;
  if (Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result')) {
    return [...messages.slice(0, -1), { role: 'user', content: last.content.filter((b) => b.type !== 'text') }];
  }
  return messages.slice(0, -1);
}

export function decideOfflineTurn(request: ModelRequest): OfflineTurn {
  const summary = request.toolChoice?.type === 'none';
  const messages = summary ? withoutInstruction(request.messages) : request.messages;
  const state = readConversation(messages);
  const plan = planFromPrompt(state.prompt);
  const tools = new Map(request.tools.map((t) => [t.name, t]));
  const say = (text: string): OfflineTurn => ({ content: [{ type: 'text', text }] });
  const facts: OfflineFacts = { summary: '', files: [], total: 0, sizes: [] };
  const finish = (text: string): OfflineTurn => {
    if (!request.outputSchema || summary) return say(`${text}\n\n${DISCLAIMER}`);
    facts.summary = `${text} (Answered by the offline demo model, without an API key.)`;
    return say(JSON.stringify(answerForSchema(request.outputSchema, facts), null, 2));
  };

  if (!state.glob) {
    if (summary)
      return finish(`I stopped before looking for ${plan.label} matching \`${plan.pattern}\`; nothing was done yet.`);
    const glob = tools.get('glob');
    if (!glob) {
      return finish(
        `I would look for ${plan.label} matching \`${plan.pattern}\`, but this run has no \`glob\` tool ` +
          `(available tools: ${listOrNone([...tools.keys()])}), so I cannot look at the workspace.`,
      );
    }
    const intro = isFileTask(state.prompt)
      ? `I'll look for ${plan.label} matching \`${plan.pattern}\`.`
      : `Offline, I can only explore files, so I'll list the ${plan.label} in the workspace (\`${plan.pattern}\`).`;
    return toolTurn(request, intro, 'glob', inputFor(glob, { pattern: plan.pattern }, ['pattern', 'glob']));
  }

  const pattern = typeof state.glob.input.pattern === 'string' ? state.glob.input.pattern : plan.pattern;
  if (!state.glob.result) return finish(`I asked for ${plan.label} matching \`${pattern}\` but got no result back.`);
  if (state.glob.result.isError) {
    return finish(
      `I tried to list ${plan.label} matching \`${pattern}\`, but the glob tool reported an error: ` +
        `${firstLine(state.glob.result.content)}`,
    );
  }
  const listing = parseGlobOutput(state.glob.result.content);
  facts.files = listing.files;
  facts.total = listing.files.length + listing.unlisted;
  if (listing.files.length === 0) return finish(`No ${plan.label} match \`${pattern}\` in this workspace.`);
  const found = `I found ${count(listing.files.length + listing.unlisted, plan.label)} matching \`${pattern}\``;

  if (!state.bash) {
    const bash = tools.get('bash');
    if (summary || !bash) {
      const why = summary
        ? 'I stopped before measuring their sizes.'
        : 'This run has no `bash` tool, so I could not measure their sizes.';
      return finish(`${found}:\n${bulletList(listing.files)}\n\n${why}`);
    }
    const files = filesToMeasure(listing.files);
    const command = measureCommand(files);
    const scope = files.length < listing.files.length + listing.unlisted ? ` (the first ${files.length})` : '';
    return toolTurn(
      request,
      `${found}. Measuring their sizes${scope} with \`wc -c\`.`,
      'bash',
      inputFor(bash, { command, description: 'Measure file sizes in bytes' }, ['command', 'cmd']),
    );
  }

  const measured = filesToMeasure(listing.files);
  const sizes = state.bash.result ? parseWcOutput(state.bash.result.content, measured) : [];
  if (sizes.length === 0) {
    const why = state.bash.result
      ? `measuring their sizes failed: ${firstLine(state.bash.result.content)}`
      : 'measuring their sizes returned nothing';
    return finish(`${found}, but ${why}\n\n${bulletList(listing.files)}`);
  }
  const bySize = [...sizes].sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path));
  facts.sizes = bySize;
  const output = state.bash.result?.content ?? '';
  // The command prints only the largest; `wc` names each path it could not measure on a line of its own.
  const failed = output.split('\n').filter((line) => /^wc: /.test(line)).length;
  const measuredCount = Math.max(bySize.length, measured.length - failed);
  return finish(sizeReport(found, bySize, measuredCount, listing, state.bash.result?.isError === true));
}

/** The paths one `wc -c` call measures: every listed one, as long as the command stays within bounds. */
function filesToMeasure(listed: readonly string[]): string[] {
  const files: string[] = [];
  let chars = measureCommand([]).length;
  for (const file of listed.slice(0, OFFLINE_MAX_MEASURED_FILES)) {
    chars += shellQuote(file).length + 1;
    if (chars > MAX_COMMAND_CHARS) break;
    files.push(file);
  }
  return files;
}

/** Sizes of `files`, largest first, only as many lines as the answer shows (and `total`). */
function measureCommand(files: readonly string[]): string {
  return `wc -c -- ${files.map(shellQuote).join(' ')} | sort -rn | head -n ${LISTED_FILES + 1}`;
}

/** `bySize`: the largest measured files, largest first; `measuredCount`: how many were measured in all. */
function sizeReport(
  found: string,
  bySize: MeasuredFile[],
  measuredCount: number,
  listing: GlobListing,
  partial: boolean,
): string {
  const largest = bySize[0]!;
  const lines = bySize.slice(0, LISTED_FILES).map((f) => `- \`${f.path}\` — ${formatBytes(f.bytes)}`);
  const shown = Math.min(bySize.length, LISTED_FILES);
  if (measuredCount > shown) lines.push(`- … and ${measuredCount - shown} more`);
  const unmeasured = listing.files.length + listing.unlisted - measuredCount;
  const notes: string[] = [];
  if (unmeasured > 0)
    notes.push(unmeasured === 1 ? '1 other file was not measured.' : `${unmeasured} other files were not measured.`);
  if (partial && unmeasured <= 0) notes.push('The size command reported an error for some paths.');
  // "The largest" only when every match was measured: otherwise it is the largest of those measured.
  const which = unmeasured > 0 ? `The largest of the ${measuredCount} measured` : 'The largest';
  return [
    `${found}. Largest first:`,
    lines.join('\n'),
    '',
    `${which} is \`${largest.path}\` at ${formatBytes(largest.bytes)}.`,
    ...notes,
  ].join('\n');
}

function toolTurn(request: ModelRequest, text: string, name: string, input: Record<string, unknown>): OfflineTurn {
  return {
    content: [
      { type: 'text', text },
      { type: 'tool_use', id: `toolu_offline_${hash(`${JSON.stringify(request.messages)}|${name}`)}`, name, input },
    ],
  };
}

/**
 * Build a tool input that fits the tool's JSON Schema: each wanted value goes under the first of
 * its candidate names the schema defines (or the first candidate when the schema lists none), and
 * optional extras only when the schema knows them (tools may reject unknown keys).
 */
function inputFor(tool: ToolSpec, values: Record<string, string>, mainNames: string[]): Record<string, unknown> {
  const properties = isRecord(tool.input_schema.properties) ? tool.input_schema.properties : {};
  const known = Object.keys(properties);
  const [mainKey, ...extraKeys] = Object.keys(values);
  const input: Record<string, unknown> = {};
  const mainName = mainNames.find((n) => known.includes(n)) ?? mainNames[0]!;
  input[mainName] = values[mainKey!];
  for (const key of extraKeys) if (known.includes(key)) input[key] = values[key];
  return input;
}

// ---- small helpers --------------------------------------------------------------------------

function isFileTask(prompt: string): boolean {
  return (
    /\bfiles?\b|\blist\b|\blargest\b|\bbiggest\b|\bsmallest\b|\bsizes?\b|\bfind\b|\bdirector(y|ies)\b|\bfolders?\b|\bcode\b|\bproject\b|\brepo/i.test(
      prompt,
    ) || LANGUAGES.some((l) => l.test.test(prompt))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function bulletList(files: string[]): string {
  const lines = files.slice(0, LISTED_FILES).map((f) => `- \`${f}\``);
  if (files.length > LISTED_FILES) lines.push(`- … and ${files.length - LISTED_FILES} more`);
  return lines.join('\n');
}

function count(n: number, label: string): string {
  // "1 TypeScript files" → "1 TypeScript file"; labels are plural nouns.
  return n === 1 ? `1 ${label.replace(/s$/, '')}` : `${n.toLocaleString('en-US')} ${label}`;
}

function listOrNone(names: string[]): string {
  return names.length ? names.join(', ') : 'none';
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '(no output)';
  return line.length > 300 ? `${cutChars(line, 300, '')}…` : line.trim();
}

/** Plausible token counts (about 4 characters a token) so progress output and usage totals move. */
function estimateUsage(request: ModelRequest, content: ContentBlock[]): Usage {
  const input = JSON.stringify([request.system ?? '', request.messages, request.tools]).length;
  return {
    inputTokens: Math.max(1, Math.ceil(input / 4)),
    outputTokens: Math.max(1, Math.ceil(JSON.stringify(content).length / 4)),
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  };
}

/** FNV-1a, 32 bit, as 8 hex digits: stable ids from the conversation. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
