import { readdirSync, readFileSync } from 'node:fs';

/** Counting a test's processes on the host by a marker in their command line (for fork-bomb tests). */

/** Live processes whose command line holds `marker` (zombies not counted). */
export function marked(marker: string): number {
  let n = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = /^\S+ \(.*\) (\S)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'))?.[1];
      if (cmdline.includes(marker) && state !== 'Z') n += 1;
    } catch {
      // Exited meanwhile.
    }
  }
  return n;
}

/** Samples `marked(marker)` every 20 ms until stopped; returns the highest count seen. */
export function samplePeak(marker: string): { stop: () => number } {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, marked(marker))), 20);
  return { stop: () => (clearInterval(timer), Math.max(peak, marked(marker))) };
}

export async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}
