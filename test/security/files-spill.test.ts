import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { createBuiltinTools, defineTool, ToolRegistry } from '../../src/tools';
import { MAX_SPILL_BYTES, StreamingSpill } from '../../src/tools/spill';
import { makeContext, makeWorkspace } from '../tools/helpers';

/**
 * The spill writer runs for every tool whose output is too long, read-only glob included, and for
 * bash's streaming output. A planted `.durable-agent`, `.durable-agent/spill` or spill file must not
 * lead it outside, and a `.durable-agent` that is a file must cost a note, not the worker.
 */
const big = defineTool({
  name: 'big',
  description: 'Returns n characters.',
  inputSchema: z.strictObject({ n: z.number().int() }),
  sideEffect: 'read_only',
  async execute(input) {
    return 'x'.repeat(input.n);
  },
});

describe('the spill writer stays in the workspace and never throws', () => {
  const registry = new ToolRegistry([...createBuiltinTools(), big]);
  let ws: string;
  let outside: string;
  let cleanup: () => void;
  const n = MAX_TOOL_OUTPUT_CHARS + 1000;
  const outsideEntries = () => readdirSync(outside).sort();

  beforeEach(() => {
    ({ ws, outside, cleanup } = makeWorkspace());
  });
  afterEach(() => cleanup());

  const plants: Record<string, () => void> = {
    "'.durable-agent' is a symlink to an outside folder": () => symlinkSync(outside, path.join(ws, '.durable-agent')),
    "'.durable-agent/spill' is a symlink to an outside folder": () => {
      mkdirSync(path.join(ws, '.durable-agent'));
      symlinkSync(outside, path.join(ws, '.durable-agent', 'spill'));
    },
    "'.durable-agent/spill/t1.txt' is a symlink to an outside file": () => {
      mkdirSync(path.join(ws, '.durable-agent', 'spill'), { recursive: true });
      symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, '.durable-agent', 'spill', 't1.txt'));
    },
  };

  for (const [kind, plant] of Object.entries(plants)) {
    test(`${kind}: the output is cut, a note says why it was not saved, the outside is untouched`, async () => {
      plant();
      const result = await registry.run('big', { n }, makeContext(ws));
      expect(result.isError).toBe(false);
      expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
      expect(result.content).toMatch(/\[The full output could not be saved to \.durable-agent\/spill: .*symbolic link/);
      expect(outsideEntries()).toEqual(['secret.txt']);
      expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    });
  }

  test('a spill file hard-linked to an outside file is replaced, not written through', async () => {
    mkdirSync(path.join(ws, '.durable-agent', 'spill'), { recursive: true });
    linkSync(path.join(outside, 'secret.txt'), path.join(ws, '.durable-agent', 'spill', 't1.txt'));
    const result = await registry.run('big', { n }, makeContext(ws));
    expect(result.content).toContain('is saved in .durable-agent/spill/t1.txt');
    expect(readFileSync(path.join(ws, '.durable-agent', 'spill', 't1.txt'), 'utf8')).toBe('x'.repeat(n));
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  test("a FILE named '.durable-agent' costs a note, not an exception", async () => {
    writeFileSync(path.join(ws, '.durable-agent'), 'not a folder');
    const result = await registry.run('big', { n }, makeContext(ws));
    expect(result.isError).toBe(false);
    expect(result.content).toMatch(
      /\[The full output could not be saved to \.durable-agent\/spill: '\.durable-agent' is not a directory/,
    );
  });

  test('read-only glob: its long listing is not spilled through a planted .durable-agent link', async () => {
    const names = Array.from({ length: 1000 }, (_, i) => `${'long-file-name-'.repeat(3)}${i}.txt`);
    mkdirSync(path.join(ws, 'many'));
    for (const name of names) writeFileSync(path.join(ws, 'many', name), '');
    symlinkSync(outside, path.join(ws, '.durable-agent'));
    const result = await registry.run('glob', { pattern: 'many/*.txt' }, makeContext(ws));
    expect(result.isError).toBe(false);
    expect(result.content).toContain('[The full output could not be saved to .durable-agent/spill');
    expect(outsideEntries()).toEqual(['secret.txt']);
  });

  test("bash's streaming spill: a FILE named '.durable-agent' does not crash the worker", async () => {
    writeFileSync(path.join(ws, '.durable-agent'), 'not a folder');
    const result = await registry.run('bash', { command: `head -c ${2 * n} /dev/zero | tr '\\0' y` }, makeContext(ws));
    expect(result.content).toMatch(/output truncated/);
    // The note says why the full output is not in a file, instead of leaving the sentence out.
    expect(result.content).toMatch(
      /omitted\. The full output could not be saved to \.durable-agent\/spill\/t1\.log: '\.durable-agent' is not a directory[^\]]*\. …\]/,
    );
    expect(result.content).toMatch(/Exit code: 0$/);
    expect(readFileSync(path.join(ws, '.durable-agent'), 'utf8')).toBe('not a folder');
  });

  test('StreamingSpill: write never throws, close never rejects, and the error says why', async () => {
    symlinkSync(outside, path.join(ws, '.durable-agent'));
    const spill = new StreamingSpill(ws, 'stream-1');
    expect(() => spill.write('a'.repeat(1000))).not.toThrow();
    expect(() => spill.write('b')).not.toThrow();
    await expect(spill.close()).resolves.toBeUndefined();
    expect(spill.started).toBe(false);
    expect(spill.error).toBe(
      "The full output could not be saved to .durable-agent/spill/stream-1.log: '.durable-agent' is a symbolic link; " +
        'this path may not contain symbolic links.',
    );
    expect(outsideEntries()).toEqual(['secret.txt']);
  });

  test('StreamingSpill: a planted link or hard link at the log path is replaced; the data arrives in order', async () => {
    mkdirSync(path.join(ws, '.durable-agent', 'spill'), { recursive: true });
    linkSync(path.join(outside, 'secret.txt'), path.join(ws, '.durable-agent', 'spill', 'stream-2.log'));
    const spill = new StreamingSpill(ws, 'stream-2');
    for (let i = 0; i < 100; i++) spill.write(`${i},`);
    await spill.close();
    expect(spill.error).toBeUndefined();
    expect(spill.started).toBe(true);
    const expected = Array.from({ length: 100 }, (_, i) => `${i},`).join('');
    expect(readFileSync(path.join(ws, spill.relativePath), 'utf8')).toBe(expected);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    expect(existsSync(path.join(outside, 'stream-2.log'))).toBe(false);
  });

  test('StreamingSpill: the cap counts bytes as written, so three-byte text cannot make the file larger', async () => {
    const spill = new StreamingSpill(ws, 'stream-3');
    // 2 MiB characters of 3 bytes each per write, well past the cap in bytes (not in characters).
    const piece = '€'.repeat(2 * 1024 * 1024);
    const writes = Math.ceil(MAX_SPILL_BYTES / piece.length);
    for (let i = 0; i < writes; i++) spill.write(piece);
    await spill.close();
    expect(spill.error).toBeUndefined();
    expect(spill.capped).toBe(true);
    expect(statSync(path.join(ws, spill.relativePath)).size).toBe(MAX_SPILL_BYTES);
  });
});
