import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { createBuiltinTools, defineTool, ToolRegistry } from '../../src/tools';
import { StreamingSpill } from '../../src/tools/spill';
import { makeContext, makeWorkspace } from '../tools/helpers';

/**
 * The check-then-use race, for real: a separate process swaps `d` and `.durable-agent` between a
 * directory inside the workspace and a symlink to an outside directory, as fast as it can, while
 * every file tool (glob and grep included, through the registry) and both spill writers run in a loop. Before the fix, this measured dozens of
 * reads of the outside file and dozens of writes landing outside; it must be 0 and 0.
 */
const RACE_MS = 20_000;

/**
 * The swapper: for each name, put the real directory in place, take it away, plant the link,
 * remove it.
 */
const SWAPPER = `
const fs = require('node:fs');
const [ws, outside, ms] = process.argv.slice(1);
const pairs = [['d', 'd.real'], ['.durable-agent', '.durable-agent.real']].map(([n, r]) => [ws + '/' + n, ws + '/' + r]);
const deadline = Date.now() + Number(ms);
let swaps = 0;
while (Date.now() < deadline) {
  for (const [name, real] of pairs) {
    // write_file and the spill writer create a missing folder: move what they made away, or swaps stop.
    try { fs.renameSync(name, name + '.made-' + swaps); } catch {}
    try { fs.renameSync(real, name); fs.renameSync(name, real); swaps++; } catch {}
    try { fs.symlinkSync(outside, name); fs.unlinkSync(name); swaps++; } catch {}
  }
}
process.stdout.write(String(swaps));
`;

const big = defineTool({
  name: 'big',
  description: 'Returns more text than the output cap, so the registry spills it.',
  inputSchema: z.strictObject({}),
  sideEffect: 'read_only',
  async execute() {
    return 'spill '.repeat(Math.ceil(MAX_TOOL_OUTPUT_CHARS / 5));
  },
});

/** Every file below `dir`, relative, except the ones named. */
function filesBelow(dir: string, except: string[] = []): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((rel) => !except.includes(rel));
}

test(`a directory swapped for an outside symlink for ${RACE_MS / 1000} s: 0 outside reads, 0 outside writes`, async () => {
  const { ws, outside, cleanup } = makeWorkspace();
  let swapper: ReturnType<typeof spawn> | undefined;
  try {
    writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE\n');
    writeFileSync(path.join(outside, 'edit.txt'), 'OUTSIDE\nEND\n');
    // A name and a content that exist only outside: glob and grep must never show either.
    writeFileSync(path.join(outside, 'only-outside.txt'), 'OUTSIDE ONLY\n');
    mkdirSync(path.join(ws, 'd.real'));
    writeFileSync(path.join(ws, 'd.real', 'secret.txt'), 'INSIDE\n');
    writeFileSync(path.join(ws, 'd.real', 'edit.txt'), 'INSIDE\nEND\n');
    mkdirSync(path.join(ws, '.durable-agent.real', 'spill'), { recursive: true });

    const registry = new ToolRegistry([...createBuiltinTools(), big]);
    swapper = spawn(process.execPath, ['-e', SWAPPER, ws, outside, String(RACE_MS)], { stdio: 'pipe' });
    let swaps = '';
    swapper.stdout?.on('data', (chunk: Buffer) => (swaps += chunk.toString()));
    swapper.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    const child = swapper;
    const swapperDone = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const deadline = Date.now() + RACE_MS;

    const count = { readsInside: 0, readsOutside: 0, readErrors: 0, writes: 0, edits: 0, spills: 0, streams: 0 };
    const search = { inside: 0, outside: 0, other: 0 };
    /** A glob or grep call as the model makes it: outside names or content must never appear. */
    const searchLoop = (tool: 'glob' | 'grep', input: Record<string, unknown>, insideMark: string) =>
      loop(async (i) => {
        const { content } = await registry.run(tool, input, ctx(i));
        if (content.includes('OUTSIDE') || content.includes('only-outside')) {
          if (search.outside++ < 3) console.log(`${tool} showed the outside: ${content.slice(0, 300)}`);
        } else if (content.includes(insideMark)) search.inside++;
        else search.other++;
      });
    let id = 0;
    const loop = async (step: (i: number) => Promise<void>) => {
      while (Date.now() < deadline) await step(id++);
    };
    const ctx = (i: number) => makeContext(ws, { toolUseId: `t-${i}` });
    await Promise.all([
      ...[1, 2].map(() =>
        loop(async (i) => {
          const result = await registry.run('read_file', { path: 'd/secret.txt' }, ctx(i));
          if (result.content.includes('OUTSIDE')) count.readsOutside++;
          else if (result.content.includes('INSIDE')) count.readsInside++;
          else count.readErrors++;
        }),
      ),
      loop(async (i) => {
        const result = await registry.run('write_file', { path: `d/w-${i}.txt`, content: `${i}\n` }, ctx(i));
        if (!result.isError) count.writes++;
      }),
      loop(async (i) => {
        const input = { path: 'd/edit.txt', old_string: 'END', new_string: `e${i}\nEND` };
        if (!(await registry.run('edit_file', input, ctx(i))).isError) count.edits++;
      }),
      loop(async (i) => {
        if ((await registry.run('big', {}, ctx(i))).content.includes('is saved in')) count.spills++;
      }),
      searchLoop('glob', { pattern: 'd/*' }, 'd/secret.txt'),
      searchLoop('glob', { pattern: '**/*outside*' }, '\u0000never'),
      // The patterns do not spell the marks, which a "No matches for pattern …" answer repeats.
      searchLoop('grep', { pattern: 'O[U]TSIDE|I[N]SIDE', path: 'd', output_mode: 'content' }, 'd/secret.txt:1:INSIDE'),
      searchLoop('grep', { pattern: 'O[U]TSIDE|I[N]SIDE', path: 'd/secret.txt', output_mode: 'content' }, 'INSIDE'),
      loop(async (i) => {
        const spill = new StreamingSpill(ws, `stream-${i}`);
        spill.write('streamed output\n');
        await spill.close();
        if (spill.started) count.streams++;
      }),
    ]);
    await swapperDone;

    const landedOutside = [
      ...filesBelow(outside, ['secret.txt', 'edit.txt', 'only-outside.txt']),
      ...readFileSync(path.join(outside, 'edit.txt'), 'utf8')
        .split('\n')
        .filter((line) => /^e\d+$/.test(line)),
    ];
    console.log(
      `race: ${Number(swaps)} swaps by the other process, ${id} tool calls (${JSON.stringify(count)}), ` +
        `glob/grep ${JSON.stringify(search)}, ` +
        `${count.readsOutside} reads returned the outside file, ${landedOutside.length} writes landed outside` +
        (landedOutside.length ? `: ${landedOutside.slice(0, 5).join(', ')}…` : ''),
    );
    expect(Number(swaps)).toBeGreaterThan(1000);
    expect(count.readsOutside).toBe(0);
    expect(search.outside).toBe(0);
    expect(search.inside).toBeGreaterThan(0);
    expect(landedOutside).toEqual([]);
    // The race was real: the tools did get through while the directory was in place.
    expect(count.readsInside).toBeGreaterThan(0);
    expect(count.writes + count.edits + count.spills + count.streams).toBeGreaterThan(0);
  } finally {
    if (swapper?.exitCode === null) swapper.kill('SIGKILL');
    cleanup();
  }
}, 40_000);
