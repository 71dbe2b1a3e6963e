import { CheckpointMissingError, type CheckpointStore } from '../../checkpoints/store';
import { loadManifest } from '../../checkpoints/restore';
import type { Manifest } from '../../checkpoints/manifest';
import { storeFromEnv } from '../../checkpoints/store-from-env';
import { CheckpointUnavailable } from '../cli-errors';

/**
 * The checkpoint store as this process's environment names it (`DURABLE_AGENT_CHECKPOINTS`, the AWS
 * variables, `DURABLE_AGENT_CODEC_KEYS`): the CLI reads the store the workers write, so it needs the
 * same settings they have.
 */
export function cliStore(env: NodeJS.ProcessEnv = process.env): CheckpointStore {
  const store = storeFromEnv(env);
  if (!store) {
    throw new CheckpointUnavailable(
      'DURABLE_AGENT_CHECKPOINTS is off here: set it (and the AWS and codec key variables) as the workers have it, so this command can read their checkpoints',
    );
  }
  return store;
}

/** A manifest from the store, or an error naming the store and the turn. */
export async function manifestOf(store: CheckpointStore, id: string, turn: number): Promise<Manifest> {
  try {
    return await loadManifest(store, id);
  } catch (error) {
    if (error instanceof CheckpointMissingError) {
      throw new CheckpointUnavailable(
        `turn ${turn}'s checkpoint ${id.slice(0, 12)} is not in the store ${store.description} (is DURABLE_AGENT_CHECKPOINTS the workers' setting? was it garbage-collected?)`,
      );
    }
    throw error;
  }
}
