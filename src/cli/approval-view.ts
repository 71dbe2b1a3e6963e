import { INPUT_PREVIEW_CHARS } from '../shared';
import { visibleLine } from './terminal-text';

/**
 * How the CLI shows a tool call that waits for approval: its whole input, field by field, each
 * line behind a gutter (`│`) so that nothing in it can pass for a line of the CLI's own, every
 * control character visible, and long runs of blanks counted rather than printed (they could push
 * the rest of a command out of sight). Never a one-line summary: the operator approves what is
 * shown, so what is shown is what will run.
 */

const GUTTER = '    │ ';
/** Runs of blanks (spaces, tabs) at least this long are shown as `⟨N blanks⟩`. */
const LONG_BLANKS = 16;

/** Said under an input that is only the run's cut record of it. */
export const CUT_INPUT_NOTE =
  `this input is cut where '…' shows (the run records ${INPUT_PREVIEW_CHARS} characters a field) and ` +
  'the whole of it could not be read from history';

/** True when the run's approval record cut this input (each string field is kept to INPUT_PREVIEW_CHARS). */
export function previewWasCut(input: unknown): boolean {
  const cut = (v: unknown) => typeof v === 'string' && v.length === INPUT_PREVIEW_CHARS && v.endsWith('…');
  if (cut(input)) return true;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return false;
  return Object.entries(input).some(([key, value]) => key === '…' || cut(value));
}

/** One line of the input, shown exactly: controls visible, long blank runs counted. */
function shownLine(line: string): string {
  const blanks = new RegExp(`[ \\t]{${LONG_BLANKS},}`, 'g');
  return visibleLine(line).replace(blanks, (run) => `⟨${run.length} blanks⟩`);
}

function valueLines(value: unknown): string[] {
  if (typeof value !== 'string') return [shownLine(JSON.stringify(value) ?? 'undefined')];
  if (value === '') return ['""'];
  return value.split('\n').map(shownLine);
}

/** The input's lines behind the gutter: `key: value`, a multi-line value indented below its key. */
export function inputLines(input: unknown): string[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return valueLines(input).map((l) => GUTTER + l);
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length === 0) return [`${GUTTER}(no input)`];
  const lines: string[] = [];
  for (const [key, value] of entries) {
    const shown = valueLines(value);
    if (shown.length === 1) lines.push(`${GUTTER}${visibleLine(key)}: ${shown[0]}`);
    else lines.push(`${GUTTER}${visibleLine(key)}: (${shown.length} lines)`, ...shown.map((l) => `${GUTTER}  ${l}`));
  }
  return lines;
}

/**
 * The lines that announce a pending approval: the tool, its call id, its whole input, and the
 * commands that decide it. When the input is only the run's cut record of it (the whole one could
 * not be read from history), that is said plainly above the decision.
 */
export function formatApproval(runId: string, toolUseId: string, name: string, input: unknown): string {
  const id = shellWord(toolUseId);
  const run = shellWord(runId);
  const lines = [`⏸ approval needed: ${visibleLine(name)} (tool call ${id}) would run with this input:`];
  lines.push(...inputLines(input));
  if (previewWasCut(input)) {
    lines.push(`  ! ${CUT_INPUT_NOTE}: see the call whole with 'durable-agent transcript ${run}' before approving`);
  }
  lines.push(`  durable-agent approve ${run} ${id}   |   durable-agent deny ${run} ${id} --reason "…"`);
  return lines.join('\n');
}

/**
 * `word` as one shell word, quoted unless it is plainly safe: the commands above are made to be
 * copied, and a tool call id comes from the model (`x; rm -rf ~` must stay an argument).
 */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_.:@%+=,/-]+$/.test(word)) return word;
  return `'${visibleLine(word).replace(/'/g, `'\\''`)}'`;
}
