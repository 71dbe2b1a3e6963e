import { newRunId, queryEvents, runResult, startRun, interruptRun, type AgentHandle } from '../client';
import type { TemporalConfig } from '../client/config';
import { anthropicKeyPresent } from '../models';
import { isReachable } from '../server/dev-server';
import type { AgentRunInput, AgentRunResult } from '../shared';
import { DEFAULT_ANTHROPIC_MODEL, OFFLINE_MODEL, contextWindowSetting, parseRunInput } from '../shared';
import type { AgentWorker } from '../worker';
import { ensureServer, startInlineWorker } from './environment';
import { checkPromptSize } from './prompt-source';
import { ServerContact, isServerUnavailable, serverAddressOf } from './server-contact';
import { exitLine, formatResult } from './format';
import { RunPrinter } from './live-events';
import { LiveFeed } from './live-feed';
import { lineSink, streamSink, type LiveSink } from './live-text';
import { Spinner } from './spinner';
import { inertJson, visibleLine } from './terminal-text';
import { withWholeApprovalInputs } from './approval-input';
import { SubagentProgress } from './subagent-progress';
import { refuseTakenId } from './run-id';
import { inspectorLink } from './inspector-note';
import { webUiLink } from './web-ui';

/** What `run` was asked: the prompt, the run input its flags set (run-flags.ts), and the CLI's own choices. */
export interface RunFlags {
  prompt: string;
  /** The run input from the flags; `run` fills in the model, the workspace and the context window. */
  input: Omit<Partial<AgentRunInput>, 'prompt'>;
  id?: string;
  detach: boolean;
  json: boolean;
  inlineWorker: boolean;
  /** `--new`: start a new run under an `--id` whose run has ended (refused without it). */
  newRun?: boolean;
  /** `--debug`: the inline worker logs each iteration (`DURABLE_AGENT_DEBUG=1`). */
  debug?: boolean;
}

const err = (line: string) => process.stderr.write(`${line}\n`);

/** Chooses the model: the flag, then DURABLE_AGENT_MODEL, then Claude with a key or the offline model without. */
export function chooseModel(flag?: string): { model: string; offline: boolean } {
  const model =
    flag ?? process.env.DURABLE_AGENT_MODEL ?? (anthropicKeyPresent() ? DEFAULT_ANTHROPIC_MODEL : OFFLINE_MODEL);
  return { model, offline: model.startsWith('offline') };
}

export async function runCommand(flags: RunFlags, config: TemporalConfig): Promise<number> {
  // With --json, stdout carries only the result; everything else goes to stderr.
  const out = flags.json ? err : (line: string) => process.stdout.write(`${line}\n`);
  const { model, offline } = chooseModel(flags.input.model);
  let contextWindow: number | undefined;
  try {
    contextWindow = contextWindowSetting(process.env);
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    return 2;
  }
  const { workspace, ...fromFlags } = flags.input;
  const input: AgentRunInput = {
    prompt: flags.prompt,
    ...fromFlags,
    model,
    // The workspace is a path on the worker. With the inline worker that is here; with dedicated
    // workers (maybe in containers, on other machines) a run without --workspace uses theirs.
    ...(workspace !== undefined ? { workspace } : flags.inlineWorker ? { workspace: process.cwd() } : {}),
    // A context window for a model the table does not know (docs/models.md).
    ...(contextWindow !== undefined ? { contextWindowTokens: contextWindow } : {}),
  };
  // Named and refused here, before a server or worker is started for nothing.
  checkPromptSize(flags.prompt);
  const parsed = parseRunInput(input);
  if (!parsed.ok) {
    err(parsed.error);
    return 2;
  }
  if (offline) {
    out(
      `No ANTHROPIC_API_KEY: running on the offline scripted model '${model}' (a deterministic demo agent, no network, $0). ` +
        'Set ANTHROPIC_API_KEY to use Claude.',
    );
  }

  if (flags.debug && (!flags.inlineWorker || flags.detach)) {
    err(
      'Note: --debug turns on the debug lines of the worker this command starts, and without the inline worker ' +
        'none is started: set DURABLE_AGENT_DEBUG=1 (or --debug) where your workers run.',
    );
  }

  const client = await ensureServer(config, out);
  // Before a worker starts: an id already taken is the operator's to decide about.
  if (flags.id !== undefined) {
    const refused = await refuseTakenId(client, config, flags.id, flags.newRun ?? false);
    if (refused) {
      err(`error: ${refused}`);
      return 2;
    }
  }
  let worker: AgentWorker | undefined;
  let workerDone: Promise<void> | undefined;
  if (flags.inlineWorker && !flags.detach) {
    ({ worker, done: workerDone } = await startInlineWorker(config, out, input.workspace, {
      debug: flags.debug ?? false,
    }));
  }

  try {
    const workflowId = flags.id ?? newRunId();
    const handle = await startRun(client, input, { workflowId, taskQueue: config.taskQueue });
    const link = webUiLink(config.address, config.namespace, workflowId, handle.firstExecutionRunId);
    out(`Started run ${workflowId} on task queue '${config.taskQueue}'`);
    out(`Web UI: ${link}`);
    const inspector = inspectorLink(config.address, workflowId);
    if (inspector) out(`Inspector: ${inspector}`);
    if (flags.detach) {
      out(
        `Detached. Follow it with: durable-agent follow ${workflowId}  (its result alone: durable-agent result ${workflowId})`,
      );
      if (flags.json)
        process.stdout.write(`${inertJson(JSON.stringify({ workflowId, runId: handle.firstExecutionRunId }))}\n`);
      return 0;
    }
    const followed = await follow(handle, out, {
      live: streamSink(flags.json ? process.stderr : process.stdout),
      json: flags.json,
    });
    return reportResult(followed.result, link, flags.json, followed.shownAnswer);
  } finally {
    if (worker) {
      worker.shutdown();
      await workerDone;
    }
  }
}

/**
 * Prints a finished run's result (as JSON on stdout with `--json`, else the summary) and, unless it
 * completed, a one-line reason on stderr. Returns the exit code: 0 for `completed`, else 1.
 * `shownAnswer`: the answer `follow` printed last, whole; a final text equal to it is not repeated.
 */
export function reportResult(result: AgentRunResult, link: string, json: boolean, shownAnswer?: string): number {
  const textShown = shownAnswer !== undefined && shownAnswer.trim() === result.finalText.trim();
  process.stdout.write(
    json ? `${inertJson(JSON.stringify(result, null, 2))}\n` : `${formatResult(result, link, textShown)}\n`,
  );
  if (result.exitReason !== 'completed') err(exitLine(result));
  return result.exitReason === 'completed' ? 0 : 1;
}

/** What `follow` saw: the run's result, and the final text when `follow` printed it whole already. */
export interface Followed {
  result: AgentRunResult;
  shownAnswer?: string;
}

export interface FollowOptions {
  /** Where the model's text goes as it streams; default: whole lines through `out`. */
  live?: LiveSink;
  /** The result goes to stdout as JSON: the final answer is not completed on the live sink. */
  json?: boolean;
  /**
   * Take the model's text straight from a worker in this process when it runs the call (`run`'s inline
   * worker; default true). Off, the text comes only through the server, as for a follower elsewhere.
   */
  inProcess?: boolean;
}

/** How often the in-flight model call's heartbeat details are read (they change at most every second). */
const LIVE_POLL_MS = 300;

/**
 * Prints the run's progress as it happens, until it ends: each model call's thinking and text as
 * it streams (read from the call's heartbeat details), then its tool calls. Ctrl-C once interrupts
 * the run (it ends promptly with what it has); a second Ctrl-C leaves at once.
 *
 * The final answer is printed once: streamed, then completed from the events and the result with
 * only what was not shown yet. When the stream could not be followed whole (a gap), `shownAnswer`
 * is unset and the caller prints the answer whole from the result.
 */
export async function follow(
  handle: AgentHandle,
  out: (line: string) => void,
  options: FollowOptions = {},
): Promise<Followed> {
  let cursor = 0;
  let interrupted = false;
  const spinner = new Spinner();
  const lines = options.live ? undefined : lineSink(out);
  const printer = new RunPrinter(options.live ?? lines!, out, spinner, handle.workflowId);
  // Subagents' own events, indented under the task call that started them (subagent-progress.ts).
  const subagents = new SubagentProgress(
    (line) => (printer.close(), out(line)),
    (id, after) => queryEvents(handle.client.getHandle(id) as AgentHandle, after),
    handle.workflowId,
  );
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    printer.close();
    out('Interrupting the run (Ctrl-C again to leave without waiting)…');
    void interruptRun(handle, 'Ctrl-C from the CLI').catch((e: Error) => err(`interrupt failed: ${e.message}`));
  };
  process.on('SIGINT', onSigint);
  // The run is durable on the server: when the server goes away we wait for it, saying so, and
  // re-arm the result long-poll once it answers again.
  const address = serverAddressOf(handle);
  const contact = new ServerContact(
    out,
    address,
    'The run is safe on the server and goes on once it is back; waiting for it. ' +
      `Ctrl-C twice leaves; 'durable-agent follow ${handle.workflowId}' picks the run up later.`,
  );
  let outcome: { ok: true; value: AgentRunResult } | { ok: false; error: unknown } | undefined;
  let waiting: Promise<void> | undefined;
  const awaitResult = () => {
    waiting = runResult(handle).then(
      (value) => void (outcome = { ok: true, value }),
      (error: unknown) => void (outcome = { ok: false, error }),
    );
  };
  // describe() each poll (not a billable action); the events query (one) only when history moved.
  const feed = new LiveFeed(handle, options.inProcess === false ? undefined : (s) => printer.snapshot(s));
  const printEvents = async () => {
    const changed = await feed.eventsChanged();
    contact.back();
    if (!changed) return;
    const page = await queryEvents(handle, cursor);
    // An approval must show the whole input that would run: the events keep it cut.
    const events = await withWholeApprovalInputs(handle.client, handle.workflowId, page.events);
    await subagents.page(events, (part) => printer.events(part));
    cursor = page.cursor;
    feed.queriedEvents();
  };
  const printLive = async () => {
    if (!printer.inFlight) return;
    const snapshot = await feed.snapshot().catch(() => undefined);
    if (snapshot) printer.snapshot(snapshot);
  };
  try {
    let failures = 0;
    let result: AgentRunResult;
    awaitResult();
    for (;;) {
      const settled = outcome;
      if (settled?.ok) {
        result = settled.value;
        break;
      }
      if (settled && !settled.ok) {
        if (!isServerUnavailable(settled.error)) throw settled.error;
        contact.lost(settled.error);
        outcome = waiting = undefined;
      }
      // While the server is away a cheap probe stands in for client calls that retry for ~20 s each.
      if (contact.away && address && !(await isReachable(address))) {
        contact.lost(NOTHING_LISTENS);
        await sleep(1000);
        continue;
      }
      if (!waiting) awaitResult();
      // A query that hangs may mean the server is gone: probe, so the operator hears of it at once.
      const probe = setTimeout(() => {
        if (address) void isReachable(address).then((up) => up || contact.lost(NOTHING_LISTENS));
      }, 3000);
      try {
        await printEvents();
        await printLive();
        failures = 0;
      } catch (e) {
        if (isServerUnavailable(e)) {
          contact.lost(e);
        } else {
          contact.back();
          // Queries need a worker; while none is up the run waits and so do we, saying why once.
          if (++failures === 3)
            out(`(waiting for a worker to answer: ${visibleLine((e as Error).message.split('\n')[0] ?? '')})`);
        }
      } finally {
        clearTimeout(probe);
      }
      await Promise.race([waiting, sleep(contact.away ? 1000 : LIVE_POLL_MS)]);
    }
    // Print whatever arrived between the last poll and the end.
    try {
      await printEvents();
    } catch {
      // The final result below says everything that matters.
    }
    // With --json the answer is in the JSON on stdout; otherwise complete it here, once.
    const whole = !options.json && printer.finish(result);
    if (!whole) printer.close();
    lines?.flush();
    return { result, ...(whole ? { shownAnswer: result.finalText } : {}) };
  } finally {
    feed.close();
    spinner.stop();
    process.off('SIGINT', onSigint);
  }
}

const NOTHING_LISTENS = 'nothing accepts connections there';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
