import type { ContentBlock, Message } from '../../shared';
import type { Transcript } from '../../client/transcript/rebuild';

/** Where output goes, a piece at a time; a returned promise is awaited (backpressure). */
export type Write = (chunk: string) => unknown;

/** Tool outputs, thinking and other long blocks with more lines than this are folded (`<details>`). */
export const FOLD_LINES = 20;

/**
 * Renders a transcript as Markdown for people, one section at a time through `write` (no second
 * copy of a large transcript is built): tool calls as their JSON input, tool results in code
 * blocks (long ones folded), compactions and continue-as-new marked where they happened.
 */
export async function renderMarkdown(
  t: Transcript,
  write: Write,
  /** Called after each message (its index): subagents are nested there (subagents-markdown.ts). */
  afterMessage?: (index: number) => Promise<void>,
): Promise<void> {
  const compactions = new Map(t.compactions.map((c) => [c.atIndex, c]));
  const executions = new Map(t.executions.slice(1).map((e, i) => [e.firstMessageIndex, { ...e, number: i + 2 }]));
  await write(`# Transcript of ${t.workflowId}\n\n`);
  await write(`${header(t)}\n\n`);
  if (t.system !== null) {
    const from = t.systemSource === 'assembleContext' ? sourcesLine(t.contextSources) : undefined;
    await write(`## System prompt\n\n${from ? `${from}\n\n` : ''}${foldable(t.system, 'system prompt')}\n\n`);
  }
  await write('## Conversation\n\n');
  for (let i = 0; i <= t.messages.length; i++) {
    const execution = executions.get(i);
    if (execution) {
      await write(
        `> ↪ **Continued as new**: execution ${execution.number} (run \`${execution.runId}\`) goes on from here.\n\n`,
      );
    }
    const compaction = compactions.get(i);
    if (compaction) {
      await write(
        `---\n\n> ✂ **${compaction.kind === 'summary' ? 'Compaction' : 'Older turns dropped'}**: the ` +
          `${compaction.replacedMessages} message${compaction.replacedMessages === 1 ? '' : 's'} above were ` +
          `replaced${compaction.kind === 'summary' ? ' by a summary' : ' to fit'}; from here on the model saw only what follows.\n\n`,
      );
    }
    if (t.closingSummary?.atIndex === i) {
      await write(
        `### Closing summary (iteration limit; not part of the conversation)\n\n${blocks(t.closingSummary.content)}\n\n`,
      );
    }
    const message = t.messages[i];
    if (message) await write(renderMessage(message, i + 1));
    if (message && afterMessage) await afterMessage(i);
  }
}

/** `Assembled from: default, AGENTS.md (1.2 KiB), …` from the context's sources. */
function sourcesLine(sources: unknown[] | undefined): string | undefined {
  const names = (sources ?? []).map((s) => {
    const source = (s ?? {}) as { kind?: unknown; path?: unknown; title?: unknown; name?: unknown };
    // MCP servers ride along in the sources (docs/mcp.md): named as the model sees their tools.
    if (source.kind === 'mcp_server') return `\`mcp__${oneLine(String(source.name ?? '?'))}\``;
    const name = typeof source.path === 'string' ? source.path : String(source.title ?? source.kind ?? '?');
    return `\`${oneLine(name)}\``;
  });
  return names.length ? `Assembled at run start from: ${names.join(', ')}.` : undefined;
}

function header(t: Transcript): string {
  const parts = [
    `status: **${t.status}**`,
    `${t.executions.length} execution${t.executions.length === 1 ? '' : 's'}`,
    `${t.messages.length} message${t.messages.length === 1 ? '' : 's'}`,
  ];
  if (t.compactions.length > 0)
    parts.push(`${t.compactions.length} compaction${t.compactions.length === 1 ? '' : 's'}`);
  const result = t.result as { exitReason?: unknown; iterations?: unknown } | undefined;
  if (typeof result?.exitReason === 'string') parts.push(`exit reason: ${result.exitReason}`);
  if (typeof result?.iterations === 'number') parts.push(`${result.iterations} iterations`);
  if (t.reason) parts.push(`reason: ${oneLine(t.reason)}`);
  return parts.join(' · ');
}

function renderMessage(message: Message, n: number): string {
  const content = message.content;
  const onlyResults = Array.isArray(content) && content.length > 0 && content.every((b) => b.type === 'tool_result');
  const title = `### ${n} · ${message.role}${onlyResults ? ' (tool results)' : ''}`;
  const body = typeof content === 'string' ? content : blocks(content);
  return `${title}\n\n${body}\n\n`;
}

function blocks(content: ContentBlock[]): string {
  return content.map(block).join('\n\n');
}

function block(b: ContentBlock): string {
  const r = b as Record<string, unknown>;
  switch (b.type) {
    case 'text':
      return typeof r['text'] === 'string' ? r['text'] : fenced(JSON.stringify(b, null, 2), 'json');
    case 'tool_use':
      return `**Tool call** \`${oneLine(String(r['name']))}\` · \`${oneLine(String(r['id']))}\`\n\n${fenced(JSON.stringify(r['input'], null, 2) ?? 'undefined', 'json')}`;
    case 'tool_result': {
      const text = typeof r['content'] === 'string' ? r['content'] : JSON.stringify(r['content'], null, 2);
      const label = `**Result** of \`${oneLine(String(r['tool_use_id']))}\`${r['is_error'] === true ? ' · **error**' : ''}`;
      return `${label}\n\n${foldable(text, 'output')}`;
    }
    case 'thinking':
      return `_Thinking:_\n\n${foldable(typeof r['thinking'] === 'string' ? r['thinking'] : '', 'thinking')}`;
    case 'redacted_thinking':
      return '_(redacted thinking)_';
    default:
      return `_${oneLine(b.type)} block:_\n\n${foldable(JSON.stringify(b, null, 2), b.type, 'json')}`;
  }
}

/** A code block, folded into `<details>` when it has more than FOLD_LINES lines. */
function foldable(text: string, what: string, language = ''): string {
  const lines = countLines(text);
  const code = fenced(text, language);
  if (lines <= FOLD_LINES) return code;
  return `<details><summary>${escapeHtml(what)} · ${lines} lines</summary>\n\n${code}\n\n</details>`;
}

/** A fenced code block whose fence is longer than any backtick run inside, so content cannot close it. */
export function fenced(text: string, language: string): string {
  let longest = 0;
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}${text.endsWith('\n') ? '' : '\n'}${fence}`;
}

function countLines(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n`]+/g, ' ').slice(0, 200);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
