import { ScriptedModel, delayed, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import { costOf } from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('budget-reservation');

/**
 * Issue 44: sixteen parallel subagents once ended at 5.0× the tree's `maxBudgetUsd` (depth 2 at
 * 5.9×). Each model call now reserves its expected cost against the tree's budget before it is
 * admitted, so the tree ends within one call's cost of its budget.
 */
const MODEL = 'claude-haiku-4-5';
const USAGE = { inputTokens: 500, outputTokens: 1_000, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
/** What every call costs: the scripted model reports the same usage each time. */
const CALL_USD = costOf(MODEL, USAGE)!;
const BUDGET = 0.05;

/** A subagent that never stops working on its own: a cheap tool call, over and over. */
function busyChild(calls: number): ScriptedModel {
  const step: ScriptStep = delayed(150, toolUse([{ name: 'glob', input: { pattern: '*.none' } }], { usage: USAGE }));
  return new ScriptedModel(Array.from({ length: calls }, () => step));
}

test('sixteen parallel subagents end within one call of the tree budget', async () => {
  const parent = new ScriptedModel([
    toolUse(
      Array.from({ length: 16 }, (_, i) => ({
        id: `t${i + 1}`,
        name: 'task',
        input: { prompt: `child: part ${i + 1}` },
      })),
      { usage: USAGE },
    ),
    text('Parent done.', { usage: USAGE }),
  ]);
  const child = busyChild(600);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { model: MODEL, maxBudgetUsd: BUDGET, maxTokens: 1_000, tools: ['glob', 'task'] });
    const result = await runResult(handle);
    expect(result.exitReason).toBe('max_budget');
    expect(result.costUsd).not.toBeNull();
    // Spent: at least the budget (the tree stops only when it is spent), at most one call more.
    expect(result.costUsd!).toBeGreaterThanOrEqual(BUDGET);
    expect(result.costUsd!).toBeLessThan(BUDGET + CALL_USD + 1e-9);
  });
  expect(child.requests.length).toBeGreaterThan(0);
}, 180_000);

test('a tree two levels deep ends within one call of its budget too', async () => {
  const parent = new ScriptedModel([
    toolUse(
      Array.from({ length: 4 }, (_, i) => ({ id: `t${i + 1}`, name: 'task', input: { prompt: `mid: part ${i + 1}` } })),
      { usage: USAGE },
    ),
    text('Parent done.', { usage: USAGE }),
  ]);
  // Each middle run starts four subagents, then answers.
  const mid = new ScriptedModel(
    Array.from({ length: 4 }, (_, i) => [
      toolUse(
        Array.from({ length: 4 }, (_, j) => ({
          id: `m${i}-${j}`,
          name: 'task',
          input: { prompt: `leaf: part ${i}.${j}` },
        })),
        { usage: USAGE },
      ),
      text('Mid done.', { usage: USAGE }),
    ]).flat(),
  );
  const leaf = busyChild(600);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, mid, leaf }) }, async (tq) => {
    const handle = await start(tq, { model: MODEL, maxBudgetUsd: BUDGET, maxTokens: 1_000, tools: ['glob', 'task'] });
    const result = await runResult(handle);
    expect(result.exitReason).toBe('max_budget');
    expect(result.costUsd!).toBeGreaterThanOrEqual(BUDGET);
    expect(result.costUsd!).toBeLessThan(BUDGET + CALL_USD + 1e-9);
  });
  // The leaves (depth 2) did work, and were held to the tree's budget with the rest.
  expect(leaf.requests.length).toBeGreaterThan(0);
}, 180_000);
