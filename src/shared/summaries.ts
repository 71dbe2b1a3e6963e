/** One-line activity summaries shown in the Temporal Web UI, e.g. `bash: npm test`. Pure. */

const MAX_SUMMARY = 120;

function oneLine(text: string, max = MAX_SUMMARY): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A short rendering of a tool call's arguments, for the UI and CLI progress. */
export function describeToolCall(name: string, input: unknown): string {
  const args = (input && typeof input === 'object' ? input : {}) as Record<string, unknown>;
  const pick = (key: string): string | undefined => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  switch (name) {
    case 'bash':
      return oneLine(`bash: ${pick('command') ?? ''}`);
    case 'read_file':
    case 'write_file':
    case 'edit_file':
      return oneLine(`${name} ${pick('path') ?? ''}`);
    case 'glob':
      return oneLine(`glob ${pick('pattern') ?? ''}${pick('path') ? ` in ${pick('path')}` : ''}`);
    case 'grep':
      return oneLine(`grep ${JSON.stringify(pick('pattern') ?? '')}${pick('path') ? ` in ${pick('path')}` : ''}`);
    default: {
      const json = typeof input === 'string' ? input : JSON.stringify(input ?? {});
      return oneLine(`${name} ${json}`);
    }
  }
}

export function modelCallSummary(model: string, iteration: number): string {
  return `model ${model} · iteration ${iteration}`;
}

export function firstLine(text: string): string {
  return oneLine(text.split('\n').find((l) => l.trim().length > 0) ?? text);
}
