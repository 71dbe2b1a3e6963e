import type { Message } from '../../shared';
import { renderMarkdown, type Write } from './markdown';
import type { Transcript } from '../../client/transcript/rebuild';
import type { TranscriptSubagent } from '../../client/transcript/subagents';

/**
 * A transcript with its subagents: each subagent's own transcript follows the message holding the
 * `task` call that started it, quoted (`> `, one more level per generation) so where it starts and
 * ends stays visible. Subagents no task call could be matched to come after the conversation.
 */
export async function renderTree(t: Transcript, write: Write): Promise<void> {
  const subagents = t.subagents ?? [];
  const byCall = new Map(subagents.filter((s) => s.toolUseId !== null).map((s) => [s.toolUseId!, s]));
  const shown = new Set<TranscriptSubagent>();
  await renderMarkdown(t, write, async (index) => {
    for (const id of taskCallIds(t.messages[index])) {
      const subagent = byCall.get(id);
      if (!subagent || shown.has(subagent)) continue;
      shown.add(subagent);
      await renderSubagent(subagent, write);
    }
  });
  const rest = subagents.filter((s) => !shown.has(s));
  if (rest.length) {
    await write('## Subagents not matched to a task call\n\n');
    for (const subagent of rest) await renderSubagent(subagent, write);
  }
}

function taskCallIds(message: Message | undefined): string[] {
  if (!message || message.role !== 'assistant' || typeof message.content === 'string') return [];
  return message.content.flatMap((b) => {
    const block = b as { type: string; id?: unknown };
    return block.type === 'tool_use' && typeof block.id === 'string' ? [block.id] : [];
  });
}

async function renderSubagent(s: TranscriptSubagent, write: Write): Promise<void> {
  const who = [s.agent ? `agent \`${code(s.agent)}\`` : 'general-purpose', `run \`${code(s.workflowId)}\``];
  if (s.toolUseId) who.push(`for task call \`${code(s.toolUseId)}\``);
  await write(`> ⤷ **Subagent** · ${who.join(' · ')}${s.description ? ` · ${code(s.description)}` : ''}\n>\n`);
  if (!s.transcript) {
    await write(`> _${code(s.note ?? 'not read')}_\n\n`);
    return;
  }
  const quoted = quoting(write);
  await renderTree(s.transcript, quoted.write);
  await quoted.end();
  await write(`> ⤶ end of subagent \`${code(s.workflowId)}\`\n\n`);
}

/** A writer that puts `> ` before every line (a Markdown blockquote, nesting one level). */
function quoting(write: Write): { write: Write; end: () => Promise<void> } {
  let atLineStart = true;
  return {
    write: (chunk) => {
      let out = '';
      for (const ch of chunk.split(/(?<=\n)/)) {
        if (ch === '') continue;
        out += `${atLineStart ? (ch === '\n' ? '>' : '> ') : ''}${ch}`;
        atLineStart = ch.endsWith('\n');
      }
      return write(out);
    },
    end: async () => {
      if (!atLineStart) await write('\n');
      await write('>\n');
    },
  };
}

function code(text: string): string {
  return text.replace(/[\r\n`]+/g, ' ').slice(0, 200);
}
