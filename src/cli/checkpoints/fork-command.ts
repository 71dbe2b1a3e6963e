import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { newRunId, startRun } from '../../client';
import type { TemporalConfig } from '../../client/config';
import type { AgentWorker } from '../../worker';
import { ensureServer, startInlineWorker } from '../environment';
import { refuseTakenId } from '../run-id';
import { follow, reportResult } from '../run-command';
import { streamSink } from '../live-text';
import { inertJson, visibleLine } from '../terminal-text';
import { webUiLink } from '../web-ui';
import { planFork } from '../../client/checkpoints/fork-plan';

export interface ForkFlags {
  /** The run to fork. */
  source: string;
  atTurn: number;
  prompt?: string;
  model?: string;
  workspace?: string;
  id?: string;
  detach: boolean;
  json: boolean;
  inlineWorker: boolean;
}

const err = (line: string) => process.stderr.write(`${line}\n`);

/**
 * `durable-agent fork <id> --at-turn N`: starts a new run from the original's turn N (fork-plan.ts)
 * and follows it as `run` does. With the inline worker, the fork's workspace is made here (empty) so
 * that the worker in this process accepts it as the operator's choice; the run's start restores turn
 * N's files into it.
 */
export async function forkCommand(flags: ForkFlags, config: TemporalConfig): Promise<number> {
  const out = flags.json ? err : (line: string) => process.stdout.write(`${line}\n`);
  const client = await ensureServer(config, out);
  if (flags.id !== undefined) {
    const refused = await refuseTakenId(client, config, flags.id, false);
    if (refused) {
      err(`error: ${refused}`);
      return 2;
    }
  }
  const forkId = flags.id ?? newRunId();
  const plan = await planFork(
    client,
    flags.source,
    {
      atTurn: flags.atTurn,
      ...(flags.prompt !== undefined ? { prompt: flags.prompt } : {}),
      ...(flags.model !== undefined ? { model: flags.model } : {}),
      ...(flags.workspace !== undefined ? { workspace: path.resolve(flags.workspace) } : {}),
    },
    forkId,
  );
  const workspace = plan.input.workspace!;
  let worker: AgentWorker | undefined;
  let workerDone: Promise<void> | undefined;
  if (flags.inlineWorker && !flags.detach) {
    await emptyDirectory(workspace);
    ({ worker, done: workerDone } = await startInlineWorker(config, out, workspace));
  }
  try {
    const handle = await startRun(client, plan.input, { workflowId: forkId, taskQueue: config.taskQueue });
    const link = webUiLink(config.address, config.namespace, forkId, handle.firstExecutionRunId);
    out(
      `Forked ${visibleLine(flags.source)} at turn ${plan.origin.turn}: run ${forkId} in ${visibleLine(workspace)} ` +
        `(its files from checkpoint ${plan.checkpointId.slice(0, 12)})`,
    );
    out(`Web UI: ${link}`);
    if (flags.detach) {
      out(`Detached. Follow it with: durable-agent follow ${forkId}`);
      if (flags.json) {
        const shown = { workflowId: forkId, runId: handle.firstExecutionRunId, forkedFrom: plan.origin, workspace };
        process.stdout.write(`${inertJson(JSON.stringify(shown))}\n`);
      }
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

/** Makes the fork's workspace here, refusing one that exists with files in it (a restore never merges). */
async function emptyDirectory(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o755 });
  const held = await fs.readdir(dir);
  if (held.length > 0) {
    throw new Error(
      `the fork's workspace ${dir} already holds files: a fork starts in an empty or new directory (--workspace DIR)`,
    );
  }
}
