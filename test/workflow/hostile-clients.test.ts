import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import fc from 'fast-check';
import { ScriptedModel, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import { ErrorTypes, WORKFLOW_TYPE, endSessionUpdate, sendMessageUpdate, stateQuery } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * Outside clients are first-class and untrusted: whatever JSON they send to whichever handler,
 * the run goes on and ends normally, and no workflow task fails because of it.
 */
const { suite } = useWorkflowSuite('hostile');

const EventType = temporal.api.enums.v1.EventType;
type Handle = WorkflowHandle<typeof agentWorkflow>;

async function workflowTaskFailures(handle: Handle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED).length;
}

/** A model that keeps working: a tool call that waits for approval now and then, answers otherwise. */
function busyModel(): ScriptStep[] {
  let call = 0;
  const step = () => {
    call += 1;
    if (call % 3 === 1) return toolUse([{ name: 'write_file', input: { path: `f${call}.txt`, content: 'x' } }]);
    return text(`answer ${call}`);
  };
  return Array.from({ length: 500 }, () => step);
}

/** JSON nested `depth` levels; fast-check's report names it instead of recursing into it. */
const deep = (depth: number): unknown => {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { nested: value };
  return Object.assign(value as object, { [fc.toStringMethod]: () => `<JSON nested ${depth} levels>` });
};

/** Any JSON, plus the values that broke handlers before: null, nothing, huge, deeply nested, near-valid shapes. */
const hostileArg = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(null, undefined, {}, [], '', 0, true),
  fc.constantFrom(
    { reason: 42 },
    { message: null },
    { message: 'x'.repeat(300_000) },
    { toolUseId: 7 },
    { after: 'x' },
  ),
  fc.record({ toolUseId: fc.string(), reason: fc.jsonValue() }, { requiredKeys: [] }),
  fc.record({ message: fc.oneof(fc.string(), fc.jsonValue()) }, { requiredKeys: [] }),
  fc.constant(deep(2_000)),
  fc.constant('y'.repeat(1_200_000)),
);

const command = fc.record({
  kind: fc.constantFrom('signal', 'update', 'query', 'normal'),
  // Interrupt ends the run (a normal end, after which Temporal refuses what follows): rarer than the rest.
  name: fc.oneof(
    { weight: 1, arbitrary: fc.constant('interrupt') },
    {
      weight: 12,
      arbitrary: fc.constantFrom(
        'sendMessage',
        'approveTool',
        'denyTool',
        'endSession',
        'state',
        'events',
        'no_such_handler',
      ),
    },
  ),
  arg: hostileArg,
  withoutArg: fc.boolean(),
});
type Command = typeof command extends fc.Arbitrary<infer T> ? T : never;

/** Sends one command; returns how it went. Only outcomes a well-behaved server/workflow gives are allowed. */
async function send(handle: Handle, c: Command): Promise<string> {
  const args = c.withoutArg ? [] : [c.arg];
  try {
    if (c.kind === 'normal') {
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'please keep going' }] });
    } else if (c.kind === 'signal') {
      const signal = handle.signal.bind(handle) as (name: string, ...a: unknown[]) => Promise<void>;
      await signal(c.name, ...args);
    } else if (c.kind === 'update') {
      await handle.executeUpdate(c.name, { args: args as [unknown] });
    } else {
      await handle.query<unknown, unknown[]>(c.name, ...args);
    }
    return 'ok';
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return 'rejected';
    const message = String((err as Error).message);
    // Asking a closed run, or for a handler that does not exist: Temporal itself answers.
    if (/completed|closed|closing|not found|unknown|did not register|no such|QueryNotRegistered/i.test(message))
      return 'refused';
    throw err;
  }
}

test('random JSON to every handler of a live run, among normal traffic: the run ends normally, no workflow task fails', async () => {
  const model = new ScriptedModel(busyModel());
  let runs = 0;
  await withWorker(suite.env, { model }, async (tq) => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 10, maxLength: 25 }), async (commands) => {
        const handle = await suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
          taskQueue: tq,
          workflowId: `hostile-${Date.now()}-${++runs}`,
          args: [
            {
              prompt: 'work',
              model: 'scripted-test',
              workspace: suite.workspace,
              session: true,
              approveMutating: true,
            },
          ],
        });
        for (const c of commands) await send(handle, c);
        // Then a normal ending: deny what waits, end the session (or it has already ended).
        const ended = await endNormally(handle);
        expect(['completed', 'interrupted']).toContain(ended);
        expect(await workflowTaskFailures(handle)).toBe(0);
      }),
      { numRuns: 15, seed: 20261123, endOnFailure: true },
    );
  });
}, 240_000);

/**
 * Drives a run to its end the normal way: denies what waits for approval, ends a waiting session.
 * Returns its exit reason, or the failure a run that ended Failed carries.
 */
async function endNormally(handle: Handle): Promise<string> {
  const outcome = handle.result().then(
    (r) => r.exitReason,
    (err: unknown) => err,
  );
  for (let i = 0; i < 100; i++) {
    const done = await Promise.race([outcome, new Promise((r) => setTimeout(() => r(undefined), 300))]);
    if (done !== undefined) {
      if (typeof done === 'string') return done;
      throw done;
    }
    const state = await handle.query(stateQuery).catch(() => undefined);
    for (const a of state?.pendingApprovals ?? []) {
      await handle.executeUpdate('denyTool', { args: [{ toolUseId: a.toolUseId }] }).catch(() => undefined);
    }
    if (state?.status === 'awaiting_input') {
      await handle.executeUpdate(endSessionUpdate, { args: [{}] }).catch(() => undefined);
    }
  }
  throw new Error('the run did not end');
}

const knownKeys = [
  'prompt',
  'model',
  'systemPrompt',
  'maxIterations',
  'maxBudgetUsd',
  'maxTokens',
  'workspace',
  'tools',
  'session',
  'permissions',
  'requireDoneTool',
  'network',
  'timeouts',
  'compactAtBytes',
  'continueAsNewAfter',
  'resume',
] as const;

/** Run inputs: mostly-valid shapes with random values in random fields, unknown keys, or any JSON at all. */
const runInput = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .dictionary(fc.constantFrom(...knownKeys), hostileArg, { maxKeys: 4 })
      .map((o) => ({ prompt: 'hi', model: 'scripted-test', ...o })),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      prompt: fc.string(),
      maxIterations: fc.oneof(fc.integer(), fc.double()),
      tools: fc.array(fc.string()),
    }),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, [], 'hi', { prompt: 'hi', resume: {} }) },
);

test('random run inputs: each either runs and ends cleanly or is refused at once with a readable reason', async () => {
  const model = new ScriptedModel(Array.from({ length: 2000 }, () => text('ok')));
  let runs = 0;
  await withWorker(suite.env, { model }, async (tq) => {
    await fc.assert(
      fc.asyncProperty(runInput, async (input) => {
        const started = await suite.env.client.workflow
          .start(WORKFLOW_TYPE, {
            taskQueue: tq,
            workflowId: `hostile-input-${Date.now()}-${++runs}`,
            args: input === undefined ? [] : [input],
          })
          .catch((err: unknown) => err as Error);
        if (started instanceof Error) {
          // Temporal itself refuses an input over its 2 MiB payload limit: refused at once, nothing started.
          expect(String(started.cause ?? started.message)).toContain('Blob data size exceeds limit');
          return;
        }
        const handle = started;
        try {
          expect(typeof (await endNormally(handle as Handle))).toBe('string');
        } catch (err) {
          expect(err).toBeInstanceOf(WorkflowFailedError);
          const cause = (err as WorkflowFailedError).cause;
          expect(cause).toBeInstanceOf(ApplicationFailure);
          expect([ErrorTypes.InvalidInput, ErrorTypes.RunFailed]).toContain((cause as ApplicationFailure).type);
          expect(cause?.message.length).toBeGreaterThan(10);
        }
        expect(await workflowTaskFailures(handle as Handle)).toBe(0);
      }),
      { numRuns: 60, seed: 20261123, endOnFailure: true },
    );
  });
}, 240_000);
