import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';
import { ConnectionConfigError, loadConnectionConfig } from '../client/config';
import { CodecKeysError } from '../codec/keys';
import { CheckpointUnavailable, RunEndedError, SteerRefused } from './cli-errors';
import { COMMANDS } from './commands';
import { UsageError, formatCommandHelp, formatCommandList, parseCommandLine } from './flags';
import { PromptRefused } from './prompt-source';
import { visibleLine, visibleText } from './terminal-text';
import { PACKAGE_VERSION } from '../version';

export { UsageError } from './flags';

const ENVIRONMENT = `Environment: the Temporal connection as the temporal CLI reads it (TEMPORAL_ADDRESS 127.0.0.1:7233,
TEMPORAL_NAMESPACE default, TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE),
TEMPORAL_TASK_QUEUE (durable-agent), ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL,
DURABLE_AGENT_MODEL, DURABLE_AGENT_CODEC_KEYS, DURABLE_AGENT_SANDBOX, DURABLE_AGENT_WORKSPACE_ROOTS, TEMPORAL_UI_URL.`;

/** `durable-agent --help`: every command, one line each. */
export const USAGE = formatCommandList(COMMANDS, ENVIRONMENT);

/** The help `help <command>` prints: the command's own, or the list of commands. */
function helpFor(command: string | undefined): string {
  const spec = COMMANDS.find((c) => c.name === command);
  return spec ? formatCommandHelp(spec) : USAGE;
}

/** Where a usage error points for more: the command's `--help`, or the list of commands. */
function helpHint(command: string | undefined): string {
  return COMMANDS.some((c) => c.name === command)
    ? `see 'durable-agent ${command} --help'`
    : "see 'durable-agent --help'";
}

/** `--profile P` (or `--profile=P`) anywhere on the command line: taken out before the command parses the rest. */
function takeProfile(argv: string[]): { args: string[]; profile?: string } {
  const args: string[] = [];
  let profile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--profile') {
      profile = argv[++i];
      if (profile === undefined) throw new UsageError('--profile needs a profile name');
    } else if (arg.startsWith('--profile=')) {
      profile = arg.slice('--profile='.length);
    } else {
      args.push(arg);
    }
  }
  return { args, ...(profile !== undefined ? { profile } : {}) };
}

export async function main(argv: string[]): Promise<number> {
  const { args, profile } = takeProfile(argv);
  const [name, ...rest] = args;
  if (name === '--version' || name === '-V') {
    process.stdout.write(`durable-agent ${PACKAGE_VERSION}\n`);
    return 0;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    // `durable-agent help run` is `durable-agent run --help`.
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined && !COMMANDS.some((c) => c.name === topic)) {
      throw new UsageError(`no command '${visibleLine(topic.slice(0, 80))}'`);
    }
    process.stdout.write(`${helpFor(topic)}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    throw new UsageError(
      `unknown command '${visibleLine(name.slice(0, 80))}'; the commands are ${COMMANDS.map((c) => c.name).join(', ')}`,
    );
  }
  const line = parseCommandLine(command, rest);
  if (line.help) {
    process.stdout.write(`${formatCommandHelp(command)}\n`);
    return 0;
  }
  const config = loadConnectionConfig(profile !== undefined ? { profile } : {});
  const say = (text: string) => process.stdout.write(`${text}\n`);
  return command.run(line, { config, say });
}

/**
 * Exits with `code` once stdout and stderr have handed everything to the OS. A pipe takes writes
 * asynchronously, so exiting at once would cut a long answer (or a `--json` result) short.
 */
function exitWhenFlushed(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/** What the CLI prints on stderr for an error, and the exit code: 2 for a bad command line or input, else 1. */
export function describeFailure(e: unknown): { code: 1 | 2; text: string } {
  // The one line that went wrong and where the rest is: the whole help would bury it.
  if (e instanceof UsageError) return { code: 2, text: `error: ${e.message}\n${helpHint(e.command)}` };
  if (e instanceof WorkflowExecutionAlreadyStartedError) {
    const id = visibleLine(e.workflowId.slice(0, 200));
    return {
      code: 1,
      text: `error: a run with id '${id}' is already running: 'durable-agent follow ${id}' follows it`,
    };
  }
  if (
    e instanceof PromptRefused ||
    e instanceof ConnectionConfigError ||
    e instanceof CodecKeysError ||
    // By name: its module loads the S3 client, which `--help` and most commands never need.
    (e as Error | undefined)?.name === 'CheckpointsSettingError'
  ) {
    return { code: 2, text: `error: ${(e as Error).message}` };
  }
  if (e instanceof WorkflowNotFoundError) return { code: 1, text: `error: no such run: ${e.message}` };
  // A run that ended without a result (cancelled, terminated, timed out) and a refused update
  // are one line each: the run's or the validator's own words.
  if (e instanceof RunEndedError || e instanceof SteerRefused || e instanceof CheckpointUnavailable)
    return { code: 1, text: `error: ${visibleText(e.message)}` };
  // Update and workflow failures say what went wrong in their cause (a validator's message, say).
  const cause = (e as { cause?: { message?: string } }).cause?.message;
  // Failure messages can carry what a model, a tool or a client wrote: shown inert.
  return { code: 1, text: `error: ${visibleText(`${(e as Error).message ?? String(e)}${cause ? `: ${cause}` : ''}`)}` };
}

/** Runs the CLI and exits with its code; errors become one readable line on stderr. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => exitWhenFlushed(code),
    (e: unknown) => {
      const { code, text } = describeFailure(e);
      process.stderr.write(`${text}\n`);
      exitWhenFlushed(code);
    },
  );
}

if (require.main === module) runCli(process.argv.slice(2));
