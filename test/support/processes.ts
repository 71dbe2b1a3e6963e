import { readFileSync } from 'node:fs';
import { listPids, readStat } from '../../src/sandbox/proc';

/**
 * Finding a command's processes from outside, whatever namespace they run in: by a marker in their
 * command line (a sandboxed shell's `$$` is its PID inside the sandbox, meaningless outside).
 */

let counter = 0;

/**
 * A `sleep` with a duration no other process uses (`sleep 30.0123417`), so its command line is a
 * marker to look it up by.
 */
export function uniqueSleep(seconds = 30): string {
  counter += 1;
  return `${seconds}.${String(process.pid % 10_000).padStart(4, '0')}${String(counter).padStart(3, '0')}`;
}

/**
 * Live (non-zombie) processes whose command line contains `marker` (bwrap's and the shell's too, as
 * the marker is in their arguments); with `program`, only those whose argv[0] is that program.
 */
export function liveProcessesWith(marker: string, program?: string): number[] {
  const found: number[] = [];
  for (const pid of listPids()) {
    if (pid === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue;
    }
    if (!cmdline.includes(marker)) continue;
    if (program !== undefined && cmdline.split(' ')[0] !== program) continue;
    const stat = readStat(pid);
    if (stat && stat.state !== 'Z') found.push(pid);
  }
  return found;
}

/** Polls `predicate` until it holds or `timeoutMs` passes; returns whether it held. */
export async function waitUntil(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return predicate();
}
