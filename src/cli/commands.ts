import type { TemporalConfig } from '../client/config';
import { UsageError, type CommandSpec, type FlagSpec, type ParsedCommandLine } from './flags';
import { DEFAULT_LIST_LIMIT, RUN_STATUSES } from './list-flags';
import { RUN_FLAGS } from './run-flags';

// Each command loads what it runs when it runs: `--help` and a usage error need only the flag
// tables above, not the Temporal client, the worker or the model SDKs behind them.
const clientModule = () => import('../client');

export interface CommandContext {
  config: TemporalConfig;
  /** A line on stdout. */
  say(line: string): void;
}

/** A command of the CLI: its spec (flags, help) and what it does with the parsed command line. */
export interface Command<F extends readonly FlagSpec[] = readonly FlagSpec[]> extends CommandSpec<F> {
  run(line: ParsedCommandLine<F>, context: CommandContext): Promise<number>;
}

/** Keeps each command's flag names and value types known to its `run`. */
const command = <const F extends readonly FlagSpec[]>(c: Command<F>): Command<F> => c;

function requireId(positionals: string[], name: string): string {
  const id = positionals[0];
  if (!id) throw new UsageError(`'${name}' needs a run id: durable-agent ${name} <id>`, name);
  return id;
}

const JSON_FLAG = { name: 'json', type: 'boolean', help: 'print JSON on stdout' } as const;
const REASON_FLAG = { name: 'reason', type: 'string', value: 'R', help: 'why, as the run records it' } as const;

const decide = (name: 'approve' | 'deny', summary: string) =>
  command({
    name,
    args: '<id> <toolUseId>',
    summary,
    flags: name === 'deny' ? [{ ...REASON_FLAG, help: 'why: the model sees it in the is_error result' }] : [],
    async run({ values, positionals }, { config, say }) {
      const id = requireId(positionals, name);
      const toolUseId = positionals[1];
      if (!toolUseId)
        throw new UsageError(`${name} needs a tool call id: durable-agent ${name} <id> <toolUseId>`, name);
      const reason = (values as { reason?: string }).reason;
      const [{ connectClient }, { decideCommand }] = await Promise.all([clientModule(), import('./steer-commands')]);
      return decideCommand({ client: await connectClient(config), say }, id, toolUseId, name === 'approve', reason);
    },
  });

/** Every command, in the order the top-level help lists them. */
export const COMMANDS: readonly Command[] = [
  command({
    name: 'run',
    args: '"<prompt>"',
    summary: 'start a run and follow its progress until it ends (exit 0 completed, 1 otherwise, 2 bad input)',
    flags: RUN_FLAGS,
    async run({ values, positionals }, { config }) {
      const promptFile = values['prompt-file'];
      if (promptFile !== undefined && positionals.length) {
        throw new UsageError('give the prompt either as an argument or with --prompt-file, not both', 'run');
      }
      const { readPromptFile } = await import('./prompt-source');
      const prompt = promptFile !== undefined ? await readPromptFile(promptFile) : positionals.join(' ');
      if (!prompt.trim()) {
        throw new UsageError(
          promptFile !== undefined
            ? `the prompt from ${promptFile === '-' ? 'standard input' : promptFile} is empty`
            : 'run needs a prompt: durable-agent run "<prompt>" (or --prompt-file F, - for stdin)',
          'run',
        );
      }
      const flags = {
        prompt,
        input: await (await import('./run-flags')).runInputFromFlags(values),
        detach: values.detach ?? false,
        json: values.json ?? false,
        inlineWorker: !values['no-inline-worker'],
        newRun: values.new ?? false,
        debug: values.debug ?? false,
        ...(values.id !== undefined ? { id: values.id } : {}),
      };
      if (flags.newRun && values.id === undefined) {
        throw new UsageError('--new goes with --id: a run without --id gets a new id anyway', 'run');
      }
      const { runCommand } = await import('./run-command');
      return runCommand(flags, config);
    },
  }),
  command({
    name: 'fork',
    args: '<id>',
    summary: "a new run from a run's turn N: its conversation to that turn and its files as they were then",
    details:
      "Turn 0 is the run's start. The fork's workspace (default: a new directory beside the original's, named after the fork)\n" +
      "is restored from turn N's checkpoint; the original run is not touched. Follows the new run as `run` does.",
    flags: [
      { name: 'at-turn', type: 'integer', value: 'N', min: 0, help: 'the turn to fork at (required)' },
      {
        name: 'prompt',
        type: 'string',
        value: 'TEXT',
        help: "the fork's next user message (needed after a turn that ended with the answer)",
      },
      { name: 'model', type: 'string', value: 'M', help: "the fork's model (default: the original's)" },
      {
        name: 'workspace',
        type: 'string',
        value: 'DIR',
        help: "the fork's workspace, new or empty (a path on the worker)",
      },
      { name: 'id', type: 'string', value: 'ID', help: "the fork's workflow id (default: a new one)" },
      { name: 'detach', type: 'boolean', help: 'start the fork and return (workers elsewhere run it)' },
      { name: 'no-inline-worker', type: 'boolean', help: 'start no worker in this process' },
      { ...JSON_FLAG, help: "print the fork's AgentRunResult (with --detach: its ids) as JSON on stdout" },
    ],
    async run({ values, positionals }, { config }) {
      const source = requireId(positionals, 'fork');
      const atTurn = values['at-turn'];
      if (atTurn === undefined)
        throw new UsageError('fork needs the turn: durable-agent fork <id> --at-turn N', 'fork');
      if (values.prompt !== undefined && !values.prompt.trim()) {
        throw new UsageError('--prompt needs a non-empty message', 'fork');
      }
      const { forkCommand } = await import('./checkpoints/fork-command');
      return forkCommand(
        {
          source,
          atTurn,
          detach: values.detach ?? false,
          json: values.json ?? false,
          inlineWorker: !values['no-inline-worker'],
          ...(values.prompt !== undefined ? { prompt: values.prompt } : {}),
          ...(values.model !== undefined ? { model: values.model } : {}),
          ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
          ...(values.id !== undefined ? { id: values.id } : {}),
        },
        config,
      );
    },
  }),
  command({
    name: 'follow',
    args: '<id>',
    summary: "a run's live progress, then its result",
    flags: [{ ...JSON_FLAG, help: 'print the AgentRunResult as JSON on stdout; progress goes to stderr' }],
    async run({ values, positionals }, { config, say }) {
      const id = requireId(positionals, 'follow');
      const json = values.json ?? false;
      const out = json ? (line: string) => process.stderr.write(`${line}\n`) : say;
      const [{ connectClient, getRun }, { follow, reportResult }, { streamSink }, { webUiLink }] = await Promise.all([
        clientModule(),
        import('./run-command'),
        import('./live-text'),
        import('./web-ui'),
      ]);
      const followed = await follow(getRun(await connectClient(config), id), out, {
        live: streamSink(json ? process.stderr : process.stdout),
        json,
      });
      return reportResult(followed.result, webUiLink(config.address, config.namespace, id), json, followed.shownAnswer);
    },
  }),
  command({
    name: 'transcript',
    args: '<id>',
    summary: 'every message of a run in full (no worker needed)',
    flags: [{ ...JSON_FLAG, help: 'the messages as JSON' }],
    async run({ values, positionals }, { config }) {
      const id = requireId(positionals, 'transcript');
      const [{ connectClient }, { stdoutWriter, transcriptCommand }] = await Promise.all([
        clientModule(),
        import('./transcript'),
      ]);
      return transcriptCommand(await connectClient(config), id, { json: values.json ?? false }, stdoutWriter());
    },
  }),
  command({
    name: 'diff',
    args: '<id>',
    summary: "what a run's turns changed in its workspace, as a unified diff (from its checkpoints)",
    details:
      'Without --turn or --from/--to: the whole run, turn 0 (the workspace as the run found it) to its last turn.\n' +
      'Reads the checkpoint store named by DURABLE_AGENT_CHECKPOINTS (and the AWS and codec key variables) as the workers have it.',
    flags: [
      { name: 'turn', type: 'integer', value: 'N', min: 0, help: 'what turn N changed (turn N-1 to turn N)' },
      { name: 'from', type: 'integer', value: 'A', min: 0, help: 'compare from turn A (default 0)' },
      { name: 'to', type: 'integer', value: 'B', min: 0, help: 'compare to turn B (default: the last turn)' },
      { name: 'stat', type: 'boolean', help: 'only the changed paths (A added, D deleted, M modified)' },
      { ...JSON_FLAG, help: 'the changed files (and the diff) as JSON' },
    ],
    async run({ values, positionals }, { config }) {
      const id = requireId(positionals, 'diff');
      const [{ connectClient }, { diffCommand }] = await Promise.all([
        clientModule(),
        import('./checkpoints/diff-command'),
      ]);
      const flags = {
        stat: values.stat ?? false,
        json: values.json ?? false,
        ...(values.turn !== undefined ? { turn: values.turn } : {}),
        ...(values.from !== undefined ? { from: values.from } : {}),
        ...(values.to !== undefined ? { to: values.to } : {}),
      };
      return diffCommand(await connectClient(config), id, flags, (text) => process.stdout.write(text));
    },
  }),
  command({
    name: 'status',
    args: '<id>',
    summary: "turn, tokens, cost, running tools and pending approvals of a run (the server's record if it is busy)",
    flags: [
      { ...JSON_FLAG, help: "the run's state as JSON" },
      {
        name: 'live',
        type: 'boolean',
        help: "wait (up to 10 s) for the run's own answer instead of the server's record when its worker is busy",
      },
    ],
    async run({ values, positionals }, { config, say }) {
      const id = requireId(positionals, 'status');
      const [{ connectClient }, { isLive, runStatus }, { inertJson }, { formatStatusReport }, { withWholeInputs }] =
        await Promise.all([
          clientModule(),
          import('./run-status'),
          import('./terminal-text'),
          import('./format'),
          import('./approval-input'),
        ]);
      const client = await connectClient(config);
      const { STATUS_LIVE_TIMEOUT_MS } = await import('./server-record');
      const report = await runStatus(client, id, values.live ? { queryTimeoutMs: STATUS_LIVE_TIMEOUT_MS } : {});
      if (values.json) say(inertJson(JSON.stringify(report, null, 2)));
      else if (isLive(report)) {
        const pendingApprovals = await withWholeInputs(client.workflow, id, report.pendingApprovals);
        const whole: import('./run-status').LiveRunStatusReport = { ...report, pendingApprovals };
        say(formatStatusReport(whole));
      } else say(formatStatusReport(report));
      return 0;
    },
  }),
  command({
    name: 'list',
    summary: 'recent runs with status, iterations, cost and model',
    flags: [
      { name: 'status', type: 'string', value: 'S', choices: RUN_STATUSES, help: 'only runs with this status' },
      { name: 'limit', type: 'integer', value: 'N', min: 1, help: `at most N runs (default ${DEFAULT_LIST_LIMIT})` },
      { name: 'query', type: 'string', value: 'Q', help: 'a Temporal visibility query the runs must also match' },
      { name: 'top-level', type: 'boolean', help: 'only runs no workflow started as its child (no subagents)' },
      { ...JSON_FLAG, help: 'the runs as JSON' },
    ],
    async run({ values }, { config, say }) {
      const flags = {
        status: values.status,
        limit: values.limit ?? DEFAULT_LIST_LIMIT,
        query: values.query,
        topLevel: values['top-level'] ?? false,
        json: values.json ?? false,
      };
      const [{ connectClient }, { listCommand }] = await Promise.all([clientModule(), import('./list-command')]);
      return listCommand(flags, await connectClient(config), say);
    },
  }),
  command({
    name: 'send',
    args: '<id> "<message>"',
    summary: 'a user message, taken at the next iteration boundary',
    flags: [],
    async run({ positionals }, { config, say }) {
      const id = requireId(positionals, 'send');
      const message = positionals.slice(1).join(' ');
      if (!message.trim()) throw new UsageError('send needs a message: durable-agent send <id> "<message>"', 'send');
      const [{ connectClient }, { sendCommand }] = await Promise.all([clientModule(), import('./steer-commands')]);
      return sendCommand({ client: await connectClient(config), say }, id, message);
    },
  }),
  decide('approve', 'let a tool call that waits for approval run'),
  decide('deny', 'refuse a tool call that waits for approval'),
  command({
    name: 'end',
    args: '<id>',
    summary: 'end a session that waits for input: it completes with its last answer',
    flags: [],
    async run({ positionals }, { config, say }) {
      const id = requireId(positionals, 'end');
      const [{ connectClient }, { endCommand }] = await Promise.all([clientModule(), import('./steer-commands')]);
      return endCommand({ client: await connectClient(config), say }, id);
    },
  }),
  command({
    name: 'interrupt',
    args: '<id>',
    summary: 'stop a run promptly (the interrupt signal)',
    flags: [REASON_FLAG],
    async run({ values, positionals }, { config, say }) {
      const id = requireId(positionals, 'interrupt');
      const [{ connectClient }, { interruptCommand }] = await Promise.all([clientModule(), import('./steer-commands')]);
      return interruptCommand({ client: await connectClient(config), say }, id, values.reason);
    },
  }),
  command({
    name: 'result',
    args: '<id>',
    summary: "wait for a run's AgentRunResult and print it",
    flags: [
      { ...JSON_FLAG, help: 'the AgentRunResult as JSON' },
      { name: 'messages', type: 'boolean', help: 'with --json: the whole conversation too' },
    ],
    async run({ values, positionals }, { config }) {
      const id = requireId(positionals, 'result');
      if (values.messages && !values.json) throw new UsageError('result --messages needs --json', 'result');
      const [{ connectClient, getRun, runResult }, { resultWithMessages }, { reportResult }, { webUiLink }] =
        await Promise.all([clientModule(), import('./result-messages'), import('./run-command'), import('./web-ui')]);
      const client = await connectClient(config);
      const result = values.messages ? await resultWithMessages(client, id) : await runResult(getRun(client, id));
      return reportResult(result, webUiLink(config.address, config.namespace, id), values.json ?? false);
    },
  }),
  command({
    name: 'checkpoints',
    args: 'gc',
    summary: 'gc: delete checkpoints and contents no open run, nor any run closed within --older-than, needs',
    details:
      'Lists runs through the server (open ones, and those closed within the period) and marks what they reference;\n' +
      'then deletes from the store named by DURABLE_AGENT_CHECKPOINTS what is unmarked and older than the period.',
    flags: [
      {
        name: 'older-than',
        type: 'string',
        value: 'DURATION',
        help: 'the period: 30d, 12h, 2w… (at least 1h; required)',
      },
      { name: 'dry-run', type: 'boolean', help: 'count what would be deleted, delete nothing' },
      { ...JSON_FLAG, help: 'the counts as JSON' },
    ],
    async run({ values, positionals }, { config, say }) {
      if (positionals[0] !== 'gc' || positionals.length !== 1) {
        throw new UsageError(
          'checkpoints takes one subcommand: durable-agent checkpoints gc --older-than 30d',
          'checkpoints',
        );
      }
      const olderThan = values['older-than'];
      if (olderThan === undefined) {
        throw new UsageError('checkpoints gc needs --older-than DURATION (such as 30d)', 'checkpoints');
      }
      const [{ connectClient }, { gcCommand }] = await Promise.all([
        clientModule(),
        import('./checkpoints/gc-command'),
      ]);
      const flags = { olderThan, dryRun: values['dry-run'] ?? false, json: values.json ?? false };
      return gcCommand(await connectClient(config), flags, say);
    },
  }),
  command({
    name: 'worker',
    summary: 'a long-lived worker for the task queue; SIGINT/SIGTERM shut it down gracefully',
    flags: [
      {
        name: 'workspace-root',
        type: 'string',
        value: 'DIR',
        multiple: true,
        help: "runs' workspaces must be inside a root (default: DURABLE_AGENT_WORKSPACE_ROOTS, else here)",
      },
      {
        name: 'agents-dir',
        type: 'string',
        value: 'DIR',
        help: "the operator's agent definitions (default: DURABLE_AGENT_AGENTS_DIR, else ~/.durable-agent/agents)",
      },
      {
        name: 'debug',
        type: 'boolean',
        help: "log each iteration's request and response sizes, timings and decisions (DURABLE_AGENT_DEBUG=1)",
      },
    ],
    async run({ values }, { config, say }) {
      const roots = values['workspace-root'];
      const agentsDir = values['agents-dir'];
      const { runWorkerCommand } = await import('./worker-command');
      return runWorkerCommand({
        config,
        out: say,
        debug: values.debug ?? false,
        ...(roots?.length ? { workspaceRoots: roots } : {}),
        ...(agentsDir !== undefined ? { agentsDir } : {}),
      });
    },
  }),
  command({
    name: 'server',
    summary: 'the embedded Temporal dev server in the foreground (SQLite, Web UI)',
    flags: [
      {
        name: 'ui-port',
        type: 'integer',
        value: 'N',
        min: 0,
        max: 65535,
        help: "the Web UI port (default: the server's port + 1000, 8233 for 7233)",
      },
      { name: 'db-filename', type: 'string', value: 'FILE', help: "the server's SQLite file" },
    ],
    async run({ values }, { config, say }) {
      const [
        { DEFAULT_UI_PORT, isReachable, parseAddress, runForegroundDevServer },
        { describeConnection, mayStartEmbeddedServer },
        { noteWebUi },
      ] = await Promise.all([import('../server/dev-server'), import('../client/config'), import('./web-ui')]);
      if (await isReachable(config.address)) {
        say(`A Temporal server already answers at ${config.address}.`);
        return 0;
      }
      if (!mayStartEmbeddedServer(config)) {
        throw new UsageError(
          `the embedded dev server serves plaintext on a loopback address; the connection asks for ${describeConnection(config)}`,
          'server',
        );
      }
      // The UI as devServerArgs puts it (the port + 1000 unless --ui-port), noted so that links point there.
      const { port } = parseAddress(config.address);
      const ui = `http://127.0.0.1:${values['ui-port'] ?? port + (DEFAULT_UI_PORT - 7233)}`;
      noteWebUi(config.address, ui);
      say(`Starting the Temporal dev server at ${config.address}; Web UI at ${ui}`);
      return runForegroundDevServer({
        address: config.address,
        namespace: config.namespace,
        uiPort: values['ui-port'],
        dbFile: values['db-filename'],
        log: say,
      });
    },
  }),
  command({
    name: 'ui',
    summary: 'the inspector: a web page of runs, their turns, tool calls, cost and live text (docs/inspector.md)',
    flags: [
      {
        name: 'port',
        type: 'integer',
        value: 'N',
        min: 0,
        max: 65535,
        help: 'the port (default: 8234 or the next free one)',
      },
      {
        name: 'host',
        type: 'string',
        value: 'H',
        help: 'the address to listen on (default 127.0.0.1: this machine only)',
      },
      {
        name: 'read-only',
        type: 'boolean',
        help: 'show runs without any action (no Approve, Deny, Interrupt, Send, End session)',
      },
    ],
    async run({ values }, { config, say }) {
      const { uiCommand } = await import('./ui-command');
      return uiCommand(
        {
          readOnly: values['read-only'] ?? false,
          ...(values.port !== undefined ? { port: values.port } : {}),
          ...(values.host !== undefined ? { host: values.host } : {}),
        },
        config,
        say,
      );
    },
  }),
  command({
    name: 'codec-server',
    summary: 'decrypts payloads for the Web UI (docs/encryption.md)',
    flags: [
      { name: 'port', type: 'integer', value: 'N', min: 0, max: 65535, help: 'the port to listen on' },
      {
        name: 'ui-origin',
        type: 'string',
        value: 'ORIGIN',
        multiple: true,
        help: "a Web UI origin allowed to call it (default: DURABLE_AGENT_CODEC_CORS_ORIGINS, else the connection's UI)",
      },
    ],
    async run({ values }, { config }) {
      const { codecServerCommand } = await import('./codec-server-command');
      const uiOrigins = values['ui-origin'];
      return codecServerCommand({
        address: config.address,
        ...(values.port !== undefined ? { port: values.port } : {}),
        ...(uiOrigins?.length ? { uiOrigins } : {}),
      });
    },
  }),
];
