import { parseArgs, type ParseArgsConfig } from 'node:util';
import { visibleLine } from './terminal-text';

/** Raised for bad command lines: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose help goes with the message (the top-level usage when absent). */
    readonly command?: string,
  ) {
    super(message);
  }
}

export type FlagType = 'boolean' | 'string' | 'integer' | 'number';

/**
 * One command-line flag: parsing, checking and `--help` all read this, so a flag is described once.
 * `integer`/`number` values arrive as numbers (`min`/`max` checked), `choices` restrict a string.
 */
export interface FlagSpec {
  /** The long name without dashes: `max-iterations`. */
  readonly name: string;
  readonly type: FlagType;
  /** What `--help` shows after the flag for its value: `N`, `FILE`, `native|xml`. */
  readonly value?: string;
  /** One line for `--help`. */
  readonly help: string;
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  /** May be given more than once; the value is then every one given, in order. */
  readonly multiple?: boolean;
}

type SingleValue<S extends FlagSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['type'] extends 'integer' | 'number'
    ? number
    : string;
type FlagValue<S extends FlagSpec> = S extends { multiple: true } ? SingleValue<S>[] : SingleValue<S>;

/** The parsed flags of a table, keyed by flag name; a flag not given is absent. */
export type FlagValues<F extends readonly FlagSpec[]> = { [S in F[number] as S['name']]?: FlagValue<S> };

/** A command: its name, what it takes besides flags, one line about it, and its flags. */
export interface CommandSpec<F extends readonly FlagSpec[] = readonly FlagSpec[]> {
  readonly name: string;
  /** Positional arguments as `--help` shows them: `<id> "<message>"`. */
  readonly args?: string;
  readonly summary: string;
  /** More lines for `durable-agent <command> --help`. */
  readonly details?: string;
  readonly flags: F;
}

export interface ParsedCommandLine<F extends readonly FlagSpec[]> {
  values: FlagValues<F>;
  positionals: string[];
  /** `--help` or `-h` was given: print the command's help and do nothing else. */
  help: boolean;
}

/** Every command takes these: `--help` here, `--profile` taken out before the command parses (main.ts). */
export const HELP_FLAG = { name: 'help', type: 'boolean', help: 'show this help and exit' } as const;
export const PROFILE_FLAG = {
  name: 'profile',
  type: 'string',
  value: 'P',
  help: 'a connection profile of the Temporal config file (docs/connection.md)',
} as const;

const flagList = (flags: readonly FlagSpec[]) =>
  [...flags, HELP_FLAG, PROFILE_FLAG].map((f) => `--${f.name}`).join(', ');

function convert(command: string, spec: FlagSpec, raw: string): string | number {
  const shown = visibleLine(raw.slice(0, 80));
  if (spec.choices && !spec.choices.includes(raw)) {
    throw new UsageError(`--${spec.name} must be one of ${spec.choices.join(', ')}; got '${shown}'`, command);
  }
  if (spec.type === 'string') return raw;
  const n = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(n) || (spec.type === 'integer' && !Number.isInteger(n))) {
    const kind = spec.type === 'integer' ? 'a whole number' : 'a number';
    throw new UsageError(`--${spec.name} must be ${kind}, got '${shown}'`, command);
  }
  if (spec.min !== undefined && n < spec.min) {
    throw new UsageError(`--${spec.name} must be at least ${spec.min}, got ${n}`, command);
  }
  if (spec.max !== undefined && n > spec.max) {
    throw new UsageError(`--${spec.name} must be at most ${spec.max}, got ${n}`, command);
  }
  return n;
}

/** node's parseArgs messages, made to name the command and what it accepts. */
function usageErrorOf(command: CommandSpec, e: unknown): UsageError {
  const code = (e as { code?: string }).code;
  const message = (e as Error).message ?? String(e);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']*)'/.exec(message)?.[1] ?? message;
    return new UsageError(
      `unknown flag ${visibleLine(flag.slice(0, 80))} for '${command.name}'; it accepts ${flagList(command.flags)}`,
      command.name,
    );
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /'(--?[\w-]+)/.exec(message)?.[1];
    const spec = command.flags.find((f) => `--${f.name}` === flag);
    if (spec && spec.type !== 'boolean' && message.includes('argument missing')) {
      return new UsageError(`${flag} needs a value: ${flagLabel(spec)}`, command.name);
    }
  }
  return new UsageError(visibleLine(message.replace(/\s*\n\s*/g, ' ')), command.name);
}

/**
 * Parses a command's arguments (after the command name) against its flag table: strict (an unknown
 * flag is an error naming the accepted ones), values converted and checked as the table says.
 */
export function parseCommandLine<F extends readonly FlagSpec[]>(
  command: CommandSpec<F>,
  args: readonly string[],
): ParsedCommandLine<F> {
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const spec of command.flags) {
    options[spec.name] = { type: spec.type === 'boolean' ? 'boolean' : 'string', multiple: spec.multiple ?? false };
  }
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw usageErrorOf(command, e);
  }
  const values: Record<string, unknown> = {};
  for (const spec of command.flags) {
    const raw = parsed.values[spec.name];
    if (raw === undefined) continue;
    if (spec.type === 'boolean') values[spec.name] = raw;
    else if (Array.isArray(raw)) values[spec.name] = raw.map((r) => convert(command.name, spec, String(r)));
    else values[spec.name] = convert(command.name, spec, String(raw));
  }
  return { values: values as FlagValues<F>, positionals: parsed.positionals, help: parsed.values.help === true };
}

const flagLabel = (f: FlagSpec) => `--${f.name}${f.type === 'boolean' ? '' : ` ${f.value ?? 'VALUE'}`}`;

/** The text of `durable-agent <command> --help`. */
export function formatCommandHelp(command: CommandSpec): string {
  const flags: FlagSpec[] = [...command.flags, PROFILE_FLAG, { ...HELP_FLAG, name: 'help, -h' }];
  const width = Math.max(...flags.map((f) => flagLabel(f).length));
  const lines = [
    `Usage: durable-agent ${command.name}${command.args ? ` ${command.args}` : ''}${command.flags.length ? ' [flags]' : ''}`,
    '',
    command.summary,
    ...(command.details ? ['', command.details] : []),
    '',
    'Flags:',
    ...flags.map((f) => `  ${flagLabel(f).padEnd(width)}  ${f.help}${f.multiple ? ' (repeatable)' : ''}`),
  ];
  return lines.join('\n');
}

/** The top-level usage: one line per command, then what every command shares. */
export function formatCommandList(commands: readonly CommandSpec[], footer: string): string {
  const label = (c: CommandSpec) => `${c.name}${c.args ? ` ${c.args}` : ''}`;
  const width = Math.max(...commands.map((c) => label(c).length));
  return [
    'durable-agent: an LLM agent loop that runs as a durable Temporal workflow',
    '',
    'Usage: durable-agent <command> [flags]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${label(c).padEnd(width)}  ${c.summary}`),
    '',
    "Every command takes --help (its flags) and --profile P; --version prints the version. 'durable-agent <command> --help' for a command's flags.",
    '',
    footer,
  ].join('\n');
}
