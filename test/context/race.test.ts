import { spawn } from 'node:child_process';
import { makeWorkspace } from '../tools/helpers';
import { assemble, skillFile, writeTree } from './helpers';

/**
 * The check-then-use race against the context assembly: a separate process swaps `AGENTS.md`,
 * `MEMORY.md` and `skills` between the real thing inside the workspace and a symlink to an outside
 * copy, as fast as it can, while the assembly runs in a loop. Not one assembly may contain the
 * outside text; some must contain the inside text (or the race proved nothing).
 */
const RACE_MS = 5_000;

const SWAPPER = `
const fs = require('node:fs');
const [ws, outside, ms] = process.argv.slice(1);
const names = ['AGENTS.md', 'MEMORY.md', 'skills'];
const deadline = Date.now() + Number(ms);
const pause = new Int32Array(new SharedArrayBuffer(4));
let swaps = 0;
while (Date.now() < deadline) {
  for (const name of names) {
    const at = ws + '/' + name, real = ws + '/' + name + '.real';
    // The real thing stays a moment (so some assemblies read it), the link only as long as the swap takes.
    try { fs.renameSync(real, at); Atomics.wait(pause, 0, 0, 0.2); fs.renameSync(at, real); swaps++; } catch {}
    try { fs.symlinkSync(outside + '/' + name, at); fs.unlinkSync(at); swaps++; } catch {}
  }
}
process.stdout.write(String(swaps));
`;

const SECRET = 'OUTSIDE SECRET';

test(`files swapped for outside symlinks for ${RACE_MS / 1000} s: no assembly shows outside text`, async () => {
  const { ws, outside, cleanup } = makeWorkspace();
  try {
    writeTree(ws, {
      'AGENTS.md.real': 'INSIDE RULES\n',
      'MEMORY.md.real': 'INSIDE MEMORY\n',
      'skills.real/inside/SKILL.md': skillFile('name: inside\ndescription: INSIDE SKILL'),
    });
    writeTree(outside, {
      'AGENTS.md': `${SECRET} RULES\n`,
      'MEMORY.md': `${SECRET} MEMORY\n`,
      'skills/inside/SKILL.md': skillFile(`name: inside\ndescription: ${SECRET} SKILL`),
    });
    const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, outside, String(RACE_MS)], { stdio: 'pipe' });
    let swaps = '';
    swapper.stdout.on('data', (chunk: Buffer) => (swaps += chunk.toString()));
    const done = new Promise<void>((resolve) => swapper.once('close', () => resolve()));

    const seen = { runs: 0, outside: 0, rules: 0, memory: 0, skill: 0 };
    const deadline = Date.now() + RACE_MS;
    while (Date.now() < deadline) {
      const { system } = await assemble(ws);
      seen.runs += 1;
      if (system.includes(SECRET)) seen.outside += 1;
      if (system.includes('INSIDE RULES')) seen.rules += 1;
      if (system.includes('INSIDE MEMORY')) seen.memory += 1;
      if (system.includes('INSIDE SKILL')) seen.skill += 1;
    }
    await done;
    console.log(`context race: ${swaps} swaps, ${JSON.stringify(seen)}`);
    expect(Number(swaps)).toBeGreaterThan(1000);
    expect(seen.outside).toBe(0);
    expect(seen.rules + seen.memory + seen.skill).toBeGreaterThan(0);
  } finally {
    cleanup();
  }
});
