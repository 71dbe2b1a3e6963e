import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TemporalConfig } from '../client/config';
import { getRun } from '../client';
import { indexedFigures, reconcileStatus } from './run-status';
import { visibleLine } from './terminal-text';

/**
 * Why `run --id ID` may not start, or undefined when it may: a run under that id that is still open
 * (Temporal refuses a second one), or one that has ended, which Temporal would silently follow with
 * a new run under the same id unless `--new` says that is meant. The check is read before the start:
 * a run started under the id in between is refused by the server itself (main.ts says so in words).
 */
export async function refuseTakenId(
  client: Client,
  config: TemporalConfig,
  id: string,
  newRun: boolean,
): Promise<string | undefined> {
  let description;
  try {
    description = await getRun(client, id).describe();
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) return undefined;
    throw e;
  }
  const shown = visibleLine(id.slice(0, 200));
  const executionStatus = description.status.name;
  if (executionStatus === 'RUNNING') {
    return (
      `a run with id '${shown}' is already running in namespace ${config.namespace}: ` +
      `follow it with 'durable-agent follow ${shown}', or choose another --id`
    );
  }
  if (newRun) return undefined;
  const status = reconcileStatus(executionStatus, indexedFigures(description).stored);
  const ended = description.closeTime ? ` at ${description.closeTime.toISOString()}` : '';
  return (
    `a run with id '${shown}' already exists: it ended ${status}${ended}. ` +
    `'durable-agent result ${shown}' shows it; pass --new to start a new run under the same id ` +
    '(the ended one stays readable by its run id), or choose another --id'
  );
}
