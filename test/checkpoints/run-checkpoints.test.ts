import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectoryStore, restoreCheckpoint } from '../../src/checkpoints';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery, stateQuery, type RunEvent } from '../../src/shared';
import { runResult, toolResults } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { SwitchableStore } from '../support/switchable-store';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * Workspace checkpoints in real runs (docs/checkpoints.md): recorded by the tool activity after each
 * turn that may have changed files, referenced by the run (event, state, history), restorable.
 */
const { suite, start } = useWorkflowSuite('run-checkpoints');

let storeDir: string;
beforeEach(async () => {
  storeDir = await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckpt-store-'));
});
afterEach(async () => {
  await fs.rm(storeDir, { recursive: true, force: true });
});

function checkpointsOf(events: RunEvent[]) {
  return events.filter((e): e is Extract<RunEvent, { kind: 'checkpoint' }> => e.kind === 'checkpoint');
}

test('turn 0 and every mutating turn take a checkpoint, read-only turns none; history holds only references', async () => {
  await fs.writeFile(path.join(suite.workspace, 'seed.txt'), 'seed\n');
  const secret = 'CONTENT-THAT-MUST-NOT-BE-IN-HISTORY-'.repeat(20);
  const model = new ScriptedModel([
    toolUse([{ name: 'write_file', input: { path: 'a.txt', content: secret } }]),
    toolUse([{ name: 'read_file', input: { path: 'a.txt' } }]),
    toolUse([
      { name: 'bash', input: { command: 'echo two > b.txt' } },
      { name: 'write_file', input: { path: 'c/d.txt', content: 'dee' } },
    ]),
    text('Done.'),
  ]);
  const store = new DirectoryStore(storeDir);
  await withWorker(suite.env, { model, deps: { checkpoints: store } }, async (tq) => {
    const handle = await start(tq, { checkpointIgnore: ['*.log'] });
    expect((await runResult(handle)).exitReason).toBe('completed');
    const { events } = await handle.query(eventsQuery, { after: 0 });
    const taken = checkpointsOf(events);
    expect(taken.map((c) => c.turn)).toEqual([0, 1, 3]);
    expect(taken[0]).toMatchObject({ filesChanged: 1 });
    expect(taken[1]).toMatchObject({ filesChanged: 1 });
    // Both calls of turn 3 are in its checkpoint: the latest-started recording saw both writes.
    expect(taken[2]).toMatchObject({ filesChanged: 2 });
    for (const c of taken) expect(c.id).toMatch(/^[0-9a-f]{64}$/);
    const state = await handle.query(stateQuery);
    expect(state.lastCheckpoint).toEqual({ turn: 3, id: taken[2]!.id, filesChanged: 2, bytes: expect.any(Number) });

    // Turn 1's checkpoint restores the files as they were after turn 1, not later ones.
    const into = await fs.mkdtemp(path.join(os.tmpdir(), 'da-ckpt-restore-'));
    try {
      await restoreCheckpoint(taken[1]!.id, { workspace: into, store });
      expect((await fs.readdir(into)).sort()).toEqual(['a.txt', 'seed.txt']);
      expect(await fs.readFile(path.join(into, 'a.txt'), 'utf8')).toBe(secret);
    } finally {
      await fs.rm(into, { recursive: true, force: true });
    }

    // History: references only, never the files' contents beyond what the model itself wrote.
    const history = JSON.stringify((await handle.fetchHistory()).events);
    expect(history.split(secret).length - 1).toBeLessThanOrEqual(3);
    expect(history).not.toContain('seed\\n');
  });
  // The model saw the tool results unchanged (no checkpoint note in them).
  expect(toolResults(model.requests[2]!.messages.at(-1))[0]!.content).toContain('CONTENT-THAT');
});

test('checkpoints off: no checkpoint event, no state field, the run as before', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'write_file', input: { path: 'a.txt', content: 'x' } }]),
    text('ok'),
  ]);
  await withWorker(suite.env, { model, deps: { checkpoints: false } }, async (tq) => {
    const handle = await start(tq);
    expect((await runResult(handle)).exitReason).toBe('completed');
    const { events } = await handle.query(eventsQuery, { after: 0 });
    expect(checkpointsOf(events)).toEqual([]);
    expect((await handle.query(stateQuery)).lastCheckpoint).toBeUndefined();
  });
});

test('the store down during a turn: the tool result stands, the turn is pending, and it lands before the next call', async () => {
  const flaky = new SwitchableStore(new DirectoryStore(storeDir));
  const model = new ScriptedModel([
    () => {
      flaky.down = true;
      return toolUse([{ name: 'write_file', input: { path: 'a.txt', content: 'kept' } }]);
    },
    () => {
      flaky.down = false;
      return toolUse([{ name: 'read_file', input: { path: 'a.txt' } }]);
    },
    text('ok'),
  ]);
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    await withWorker(suite.env, { model, deps: { checkpoints: flaky } }, async (tq) => {
      const handle = await start(tq);
      expect((await runResult(handle)).exitReason).toBe('completed');
      const { events } = await handle.query(eventsQuery, { after: 0 });
      const turn1 = checkpointsOf(events).filter((c) => c.turn === 1);
      expect(turn1).toEqual([
        expect.objectContaining({ turn: 1, id: '', pending: true }),
        expect.objectContaining({ turn: 1, id: expect.stringMatching(/^[0-9a-f]{64}$/), filesChanged: 1 }),
      ]);
      expect((await handle.query(stateQuery)).lastCheckpoint).toMatchObject({ turn: 1, id: turn1[1]!.id });
    });
  } finally {
    warn.mockRestore();
  }
  const wrote = toolResults(model.requests[1]!.messages.at(-1))[0]!;
  expect(wrote.is_error).toBeFalsy();
  expect(wrote.content).toContain('Wrote 4 bytes');
  expect(toolResults(model.requests[2]!.messages.at(-1))[0]!.content).toContain('kept');
});

/** History of a finished run: events by type, and the bytes of its events as the server returns them. */
async function historyOf(handle: { fetchHistory(): Promise<{ events?: unknown[] | null }> }) {
  const events = (await handle.fetchHistory()).events ?? [];
  const types = new Map<string, number>();
  for (const e of events) {
    const type = Object.keys(e as object).find((k) => k.endsWith('EventAttributes')) ?? '?';
    types.set(type, (types.get(type) ?? 0) + 1);
  }
  return { count: events.length, types: Object.fromEntries(types), bytes: JSON.stringify(events).length };
}

test('cost in history: a mutating loop adds no event (no billable action) and a bounded reference per turn; a read-only loop adds only turn 0', async () => {
  const turns = 10;
  const loop = (name: 'write_file' | 'read_file') =>
    new ScriptedModel([
      ...Array.from({ length: turns }, (_, i) =>
        toolUse([
          {
            id: `c${i}`,
            name,
            input: name === 'write_file' ? { path: 'a.txt', content: `v${i}` } : { path: 'seed.txt' },
          },
        ]),
      ),
      text('done'),
    ]);
  await fs.writeFile(path.join(suite.workspace, 'seed.txt'), 'seed');
  const measure = async (name: 'write_file' | 'read_file', checkpoints: DirectoryStore | false) =>
    withWorker(suite.env, { model: loop(name), deps: { checkpoints } }, async (tq) => {
      const handle = await start(tq);
      expect((await runResult(handle)).exitReason).toBe('completed');
      return historyOf(handle);
    });
  const store = new DirectoryStore(storeDir);
  const mutatingOff = await measure('write_file', false);
  const mutatingOn = await measure('write_file', store);
  const readOnlyOff = await measure('read_file', false);
  const readOnlyOn = await measure('read_file', store);
  // Not one event more: checkpoints ride in the activities the run makes anyway.
  expect(mutatingOn.types).toEqual(mutatingOff.types);
  expect(readOnlyOn.types).toEqual(readOnlyOff.types);
  const perTurn = (mutatingOn.bytes - mutatingOff.bytes) / turns;
  const readOnlyExtra = readOnlyOn.bytes - readOnlyOff.bytes;
  process.stderr.write(
    `[checkpoint history cost] mutating loop: +${perTurn.toFixed(0)} bytes per turn (${mutatingOff.bytes} → ${mutatingOn.bytes}, ${turns} turns); ` +
      `read-only loop: +${readOnlyExtra} bytes in all (${readOnlyOff.bytes} → ${readOnlyOn.bytes}); events ${mutatingOn.count} / ${readOnlyOn.count}\n`,
  );
  // The reference (~140 bytes of JSON) and the last id on the next call's input (~85 bytes): see docs/benchmarks.md.
  expect(perTurn).toBeLessThan(400);
  // Turn 0's reference only: the read-only calls carry turn 0's id, nothing else.
  expect(readOnlyExtra).toBeLessThan(400 + turns * 100);
});
