import { WorkflowNotFoundError } from '@temporalio/client';
import { parseArgs } from 'node:util';
import { RunEndedError, connectClient, getRun, runResult } from '../client';
import { ConnectionConfigError, describeConnection, loadConnectionConfig, mayStartEmbeddedServer } from '../config';
import { TOOL_PROTOCOLS, type RunToolChoice, type ToolProtocol } from '../shared';
import { CodecKeysError } from '../codec';
import { codecServerCommand } from './codec-server-command';
import { streamSink } from './live-text';
import { stdoutWriter, transcriptCommand } from './transcript';
import { isReachable, runForegroundDevServer, webUiLink } from '../server/dev-server';
import { formatStatusReport } from './format';
import { DEFAULT_LIST_LIMIT, RUN_STATUSES, isRunStatus, listCommand } from './list-command';
import { PromptRefused, readPromptFile } from './prompt-source';
import { readOutputSchemaFile } from './output-schema-file';
import { resultWithMessages } from './result-messages';
import { follow, reportResult, runCommand } from './run-command';
import { withWholeInputs } from './approval-input';
import { isLive, runStatus, type LiveRunStatusReport } from './run-status';
import { inertJson, visibleLine, visibleText } from './terminal-text';
import { SteerRefused, decideCommand, endCommand, interruptCommand, sendCommand } from './steer-commands';
import { runWorkerCommand } from './worker-command';

const USAGE = `durable-agent: an LLM agent loop that runs as a durable Temporal workflow

Usage:
  durable-agent run "<prompt>" | --prompt-file F|- [--model M] [--max-iterations N] [--max-budget-usd X]
                               [--max-tokens N] [--workspace DIR] [--system S] [--id ID] [--detach] [--json]
                               [--no-inline-worker] [--session] [--approve] [--approval-timeout SECONDS]
                               [--require-done-tool] [--network] [--tool-protocol native|xml]
                               [--system-replace S] [--max-session-iterations N] [--mcp-config FILE]
                               [--output-schema FILE] [--tool-choice auto|none|TOOL]
  durable-agent follow <id> [--json]
  durable-agent transcript <id> [--json]      (every message of a run in full; no worker needed)
  durable-agent send <id> "<message>"
  durable-agent approve <id> <toolUseId>
  durable-agent deny <id> <toolUseId> [--reason R]
  durable-agent end <id>                      (ends a session that waits for input)
  durable-agent status <id> [--json]
  durable-agent interrupt <id> [--reason R]
  durable-agent result <id> [--json [--messages]]
  durable-agent list [--status S] [--limit N] [--query Q] [--top-level] [--json]
  durable-agent worker [--workspace-root DIR]... [--agents-dir DIR]  (runs' workspaces must be inside a root; default: here)
  durable-agent server [--ui-port N] [--db-filename FILE]
  durable-agent codec-server [--port N]       (decrypts payloads for the Web UI; see docs/encryption.md)

Every command takes --profile P: a connection profile of the Temporal config file (docs/connection.md).

Environment: the Temporal connection as the temporal CLI reads it (TEMPORAL_ADDRESS 127.0.0.1:7233,
TEMPORAL_NAMESPACE default, TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE),
TEMPORAL_TASK_QUEUE (durable-agent), ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL,
DURABLE_AGENT_MODEL, DURABLE_AGENT_CODEC_KEYS, DURABLE_AGENT_SANDBOX, DURABLE_AGENT_WORKSPACE_ROOTS, DURABLE_AGENT_AGENTS_DIR,
TEMPORAL_UI_URL.`;

/** Raised for bad command lines: printed with the usage, exit code 2. */
class UsageError extends Error {}

function numberFlag(name: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name} must be ${integer ? 'a whole number' : 'a number'}, got '${value}'`);
  }
  return n;
}

function requireId(positionals: string[], command: string): string {
  const id = positionals[0];
  if (!id) throw new UsageError(`'${command}' needs a run id: durable-agent ${command} <id>`);
  return id;
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

/** `--tool-choice auto|none|<tool>`: a tool name forces that tool on the first model call. */
function toolChoiceFlag(value: string): RunToolChoice {
  if (value === 'auto' || value === 'none') return value;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(value)) {
    throw new UsageError(`--tool-choice must be auto, none or a tool name, got '${visibleLine(value.slice(0, 80))}'`);
  }
  return { type: 'tool', name: value };
}

function toolProtocolFlag(value: string | undefined): ToolProtocol | undefined {
  if (value === undefined) return undefined;
  if (!(TOOL_PROTOCOLS as readonly string[]).includes(value)) {
    throw new UsageError(`--tool-protocol must be one of ${TOOL_PROTOCOLS.join(', ')}; got '${value}'`);
  }
  return value as ToolProtocol;
}

export async function main(argv: string[]): Promise<number> {
  const { args, profile } = takeProfile(argv);
  const [command, ...rest] = args;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  const config = loadConnectionConfig(profile !== undefined ? { profile } : {});
  const say = (line: string) => process.stdout.write(`${line}\n`);
  switch (command) {
    case 'run': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          model: { type: 'string' },
          'max-iterations': { type: 'string' },
          'max-budget-usd': { type: 'string' },
          'max-tokens': { type: 'string' },
          workspace: { type: 'string' },
          system: { type: 'string' },
          id: { type: 'string' },
          detach: { type: 'boolean', default: false },
          json: { type: 'boolean', default: false },
          'no-inline-worker': { type: 'boolean', default: false },
          session: { type: 'boolean', default: false },
          approve: { type: 'boolean', default: false },
          'require-done-tool': { type: 'boolean', default: false },
          'approval-timeout': { type: 'string' },
          'prompt-file': { type: 'string' },
          network: { type: 'boolean', default: false },
          'tool-protocol': { type: 'string' },
          'system-replace': { type: 'string' },
          'max-session-iterations': { type: 'string' },
          'mcp-config': { type: 'string' },
          'output-schema': { type: 'string' },
          'tool-choice': { type: 'string' },
        },
      });
      const promptFile = values['prompt-file'];
      if (promptFile !== undefined && positionals.length) {
        throw new UsageError('give the prompt either as an argument or with --prompt-file, not both');
      }
      const prompt = promptFile !== undefined ? await readPromptFile(promptFile) : positionals.join(' ');
      if (!prompt.trim()) {
        throw new UsageError(
          promptFile !== undefined
            ? `the prompt from ${promptFile === '-' ? 'standard input' : promptFile} is empty`
            : 'run needs a prompt: durable-agent run "<prompt>" (or --prompt-file F, - for stdin)',
        );
      }
      return runCommand(
        {
          prompt,
          model: values.model,
          maxIterations: numberFlag('max-iterations', values['max-iterations'], true),
          maxBudgetUsd: numberFlag('max-budget-usd', values['max-budget-usd'], false),
          maxTokens: numberFlag('max-tokens', values['max-tokens'], true),
          workspace: values.workspace,
          systemPrompt: values.system,
          id: values.id,
          detach: values.detach ?? false,
          json: values.json ?? false,
          inlineWorker: !values['no-inline-worker'],
          session: values.session ?? false,
          approve: values.approve ?? false,
          requireDoneTool: values['require-done-tool'] ?? false,
          approvalTimeoutSeconds: numberFlag('approval-timeout', values['approval-timeout'], false),
          network: values.network ?? false,
          toolProtocol: toolProtocolFlag(values['tool-protocol']),
          maxSessionIterations: numberFlag('max-session-iterations', values['max-session-iterations'], true),
          ...(values['mcp-config'] !== undefined ? { mcpConfig: values['mcp-config'] } : {}),
          ...(values['tool-choice'] !== undefined ? { toolChoice: toolChoiceFlag(values['tool-choice']) } : {}),
          ...(values['output-schema'] !== undefined
            ? { outputSchema: await readOutputSchemaFile(values['output-schema']) }
            : {}),
          ...(values['system-replace'] !== undefined
            ? { systemPrompt: values['system-replace'], systemReplace: true }
            : {}),
        },
        config,
      );
    }
    case 'status': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { json: { type: 'boolean', default: false } },
      });
      const id = requireId(positionals, 'status');
      const client = await connectClient(config);
      const report = await runStatus(client, id);
      if (values.json) say(inertJson(JSON.stringify(report, null, 2)));
      else if (isLive(report)) {
        const pendingApprovals = await withWholeInputs(client.workflow, id, report.pendingApprovals);
        const whole: LiveRunStatusReport = { ...report, pendingApprovals };
        say(formatStatusReport(whole));
      } else say(formatStatusReport(report));
      return 0;
    }
    case 'interrupt': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { reason: { type: 'string' } },
      });
      const id = requireId(positionals, 'interrupt');
      return interruptCommand({ client: await connectClient(config), say }, id, values.reason);
    }
    case 'follow': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { json: { type: 'boolean', default: false } },
      });
      const id = requireId(positionals, 'follow');
      const out = values.json ? (line: string) => process.stderr.write(`${line}\n`) : say;
      const followed = await follow(getRun(await connectClient(config), id), out, {
        live: streamSink(values.json ? process.stderr : process.stdout),
        json: values.json ?? false,
      });
      return reportResult(followed.result, webUiLink(config.namespace, id), values.json ?? false, followed.shownAnswer);
    }
    case 'transcript': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { json: { type: 'boolean', default: false } },
      });
      const id = requireId(positionals, 'transcript');
      return transcriptCommand(await connectClient(config), id, { json: values.json ?? false }, stdoutWriter());
    }
    case 'codec-server': {
      const { values } = parseArgs({ args: rest, options: { port: { type: 'string' } } });
      const port = numberFlag('port', values.port, true);
      if (port !== undefined && (port < 0 || port > 65535)) throw new UsageError(`--port must be 0-65535, got ${port}`);
      return codecServerCommand(port !== undefined ? { port } : {});
    }
    case 'send': {
      const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
      const id = requireId(positionals, 'send');
      const message = positionals.slice(1).join(' ');
      if (!message.trim()) throw new UsageError('send needs a message: durable-agent send <id> "<message>"');
      return sendCommand({ client: await connectClient(config), say }, id, message);
    }
    case 'end': {
      const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: {} });
      const id = requireId(positionals, 'end');
      return endCommand({ client: await connectClient(config), say }, id);
    }
    case 'approve':
    case 'deny': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { reason: { type: 'string' } },
      });
      const id = requireId(positionals, command);
      const toolUseId = positionals[1];
      if (!toolUseId)
        throw new UsageError(`${command} needs a tool call id: durable-agent ${command} <id> <toolUseId>`);
      const context = { client: await connectClient(config), say };
      return decideCommand(context, id, toolUseId, command === 'approve', values.reason);
    }
    case 'result': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: { json: { type: 'boolean', default: false }, messages: { type: 'boolean', default: false } },
      });
      const id = requireId(positionals, 'result');
      if (values.messages && !values.json) throw new UsageError('result --messages needs --json');
      const client = await connectClient(config);
      const result = values.messages ? await resultWithMessages(client, id) : await runResult(getRun(client, id));
      return reportResult(result, webUiLink(config.namespace, id), values.json ?? false);
    }
    case 'list': {
      const { values } = parseArgs({
        args: rest,
        options: {
          status: { type: 'string' },
          limit: { type: 'string' },
          query: { type: 'string' },
          json: { type: 'boolean', default: false },
          'top-level': { type: 'boolean', default: false },
        },
      });
      const status = values.status;
      if (status !== undefined && !isRunStatus(status)) {
        throw new UsageError(`--status must be one of ${RUN_STATUSES.join(', ')}; got '${status}'`);
      }
      const limit = numberFlag('limit', values.limit, true) ?? DEFAULT_LIST_LIMIT;
      if (limit < 1) throw new UsageError(`--limit must be at least 1, got ${limit}`);
      const flags = { status, limit, query: values.query, json: values.json ?? false, topLevel: values['top-level'] };
      return listCommand(flags, await connectClient(config), say);
    }
    case 'worker': {
      const { values } = parseArgs({
        args: rest,
        options: { 'workspace-root': { type: 'string', multiple: true }, 'agents-dir': { type: 'string' } },
      });
      const roots = values['workspace-root'];
      const agentsDir = values['agents-dir'];
      return runWorkerCommand({
        config,
        out: say,
        ...(roots?.length ? { workspaceRoots: roots } : {}),
        ...(agentsDir !== undefined ? { agentsDir } : {}),
      });
    }
    case 'server': {
      const { values } = parseArgs({
        args: rest,
        options: { 'ui-port': { type: 'string' }, 'db-filename': { type: 'string' } },
      });
      if (await isReachable(config.address)) {
        say(`A Temporal server already answers at ${config.address}.`);
        return 0;
      }
      if (!mayStartEmbeddedServer(config)) {
        throw new UsageError(
          `the embedded dev server serves plaintext on a loopback address; the connection asks for ${describeConnection(config)}`,
        );
      }
      say(
        `Starting the Temporal dev server at ${config.address}; Web UI at http://127.0.0.1:${values['ui-port'] ?? 8233}`,
      );
      return runForegroundDevServer({
        address: config.address,
        namespace: config.namespace,
        uiPort: numberFlag('ui-port', values['ui-port'], true),
        dbFile: values['db-filename'],
        log: say,
      });
    }
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
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

/** Runs the CLI and exits with its code; errors become one readable line on stderr. */
export function runCli(argv: string[]): void {
  main(argv).then(
    (code) => exitWhenFlushed(code),
    (e: unknown) => {
      if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        process.stderr.write(`error: ${(e as Error).message}\n\n${USAGE}\n`);
        return exitWhenFlushed(2);
      }
      if (e instanceof PromptRefused || e instanceof ConnectionConfigError || e instanceof CodecKeysError) {
        process.stderr.write(`error: ${e.message}\n`);
        return exitWhenFlushed(2);
      }
      if (e instanceof WorkflowNotFoundError) {
        process.stderr.write(`error: no such run: ${e.message}\n`);
        return exitWhenFlushed(1);
      }
      // A run that ended without a result (cancelled, terminated, timed out) and a refused update
      // are one line each: the run's or the validator's own words.
      if (e instanceof RunEndedError || e instanceof SteerRefused) {
        process.stderr.write(`error: ${visibleText(e.message)}\n`);
        return exitWhenFlushed(1);
      }
      // Update and workflow failures say what went wrong in their cause (a validator's message, say).
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      // Failure messages can carry what a model, a tool or a client wrote: shown inert.
      process.stderr.write(
        `error: ${visibleText(`${(e as Error).message ?? String(e)}${cause ? `: ${cause}` : ''}`)}\n`,
      );
      return exitWhenFlushed(1);
    },
  );
}

if (require.main === module) runCli(process.argv.slice(2));
