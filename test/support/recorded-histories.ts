import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** The replay corpus: every recorded history in test/histories (see test/replay.test.ts). */
export const HISTORIES_DIR = path.join(__dirname, '..', 'histories');

/**
 * Every recorded history, keyed for replay. A run whose commands name its own id (a parent's child
 * ids, `<id>.task-<n>`) is recorded with that id beside its events and replays under it.
 */
export async function loadRecordedHistories() {
  const files = (await fs.readdir(HISTORIES_DIR)).filter((f) => f.endsWith('.json')).sort();
  return Promise.all(
    files.map(async (file) => {
      const { workflowId, ...history } = JSON.parse(await fs.readFile(path.join(HISTORIES_DIR, file), 'utf8'));
      return { workflowId: typeof workflowId === 'string' ? workflowId : file, history: historyFromJSON(history) };
    }),
  );
}
