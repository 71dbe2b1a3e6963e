import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { dataDir } from '../server/dev-server';

/**
 * A running inspector notes its URL (with its token: the file is the user's alone, mode 0600) by
 * Temporal server address, so that `run` can print the run's inspector page beside its Web UI link.
 */
const NOTE_FILE = 'inspector.json';

interface Note {
  url: string;
  pid: number;
}

function noteFile(): string {
  return path.join(dataDir(), NOTE_FILE);
}

function readNotes(): Record<string, Note> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(noteFile(), 'utf8'));
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, Note>)
      : {};
  } catch {
    return {};
  }
}

export function noteInspector(address: string, url: string): void {
  try {
    mkdirSync(dataDir(), { recursive: true });
    writeFileSync(noteFile(), JSON.stringify({ ...readNotes(), [address]: { url, pid: process.pid } }, null, 2), {
      mode: 0o600,
    });
  } catch {
    // Only `run`'s printed link depends on it.
  }
}

export function forgetInspector(address: string, url: string): void {
  const notes = readNotes();
  if (notes[address]?.url !== url) return;
  delete notes[address];
  try {
    if (Object.keys(notes).length) writeFileSync(noteFile(), JSON.stringify(notes, null, 2), { mode: 0o600 });
    else rmSync(noteFile(), { force: true });
  } catch {
    // Best effort, as above.
  }
}

/**
 * The inspector's page of a run when an inspector for the server at `address` is running (its
 * process alive), else undefined: `run` prints it next to the Web UI link.
 */
export function inspectorLink(address: string, workflowId: string): string | undefined {
  const note = readNotes()[address];
  if (!note || typeof note.url !== 'string' || !/^http:\/\/[^\s]+\?token=[\w-]+$/.test(note.url)) return undefined;
  if (typeof note.pid !== 'number' || !alive(note.pid)) return undefined;
  return `${note.url}#/run/${encodeURIComponent(workflowId)}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
