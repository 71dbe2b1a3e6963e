import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, delayed, fail, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import {
  approveToolUpdate,
  denyToolUpdate,
  endSessionUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
  type AgentRunInput,
  type ExitReason,
} from '../../src/shared';
import type { ActivityDeps } from '../../src/activities';
import { createMcpRuntime } from '../../src/mcp';
import { stdioTestServer } from '../mcp/support/servers';
import { waitForState } from '../support/run-helpers';

/**
 * The runs whose histories make the replay corpus (test/histories/<name>-<label>.json): every exit
 * reason, sessions, approvals, an interrupt, a cancel, continue-as-new and MCP tools. Each is small
 * (a few iterations) so the corpus stays quick to replay and readable in a diff.
 */
export interface Scenario {
  name: string;
  steps: () => ScriptStep[];
  input: (workspace: string) => Omit<AgentRunInput, 'prompt' | 'workspace'> & { prompt?: string };
  /** Drives the run from outside (updates, signals, cancel) while it runs. */
  drive?: (handle: WorkflowHandle) => Promise<void>;
  /** How the run ends: an exit reason, or the workflow's own failure / cancellation. */
  exit: ExitReason;
  /** Extra worker dependencies (an MCP runtime) and how to release them. */
  deps?: () => { deps: Partial<ActivityDeps>; close(): Promise<void> };
  /** Files the workspace starts with. */
  files?: Record<string, string>;
}

/** Waits until the run has asked for `n` approvals in all (the last one pending now). */
const approvalPending = (handle: WorkflowHandle, toolUseId: string) =>
  waitForState(handle, (s) => s.pendingApprovals.some((a) => a.toolUseId === toolUseId));

const modelCallStarted = async (handle: WorkflowHandle, iteration: number) => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { events } = await handle.query(eventsQuery, {});
    if (events.some((e) => e.kind === 'model_call_started' && e.iteration === iteration)) return;
    if (Date.now() > deadline) throw new Error(`model call ${iteration} never started`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

export const SCENARIOS: Scenario[] = [
  {
    name: 'multi-step-max-iterations',
    files: { 'README.md': '# demo\nhello world\n' },
    steps: () => [
      toolUse(
        [
          { id: 'toolu_01', name: 'glob', input: { pattern: '**/*' } },
          { id: 'toolu_02', name: 'read_file', input: { path: 'README.md' } },
          { id: 'toolu_03', name: 'nonexistent_tool', input: {} },
        ],
        { text: 'Looking around.', usage: { inputTokens: 120, outputTokens: 40 } },
      ),
      toolUse([{ id: 'toolu_04', name: 'write_file', input: { path: 'out/notes.txt', content: 'hello\n' } }], {
        usage: { inputTokens: 300, outputTokens: 30 },
      }),
      toolUse([{ id: 'toolu_05', name: 'bash', input: { command: 'wc -c out/notes.txt' } }], {
        usage: { inputTokens: 350, outputTokens: 20 },
      }),
      text('Summary: listed files, read the README, wrote notes.', { usage: { inputTokens: 400, outputTokens: 15 } }),
    ],
    input: () => ({ prompt: 'Explore and take notes', maxIterations: 3 }),
    exit: 'max_iterations',
  },
  {
    name: 'mcp-tools',
    steps: () => [
      toolUse([
        { id: 'toolu_m1', name: 'mcp__test__lookup', input: { key: 'alpha' } },
        { id: 'toolu_m2', name: 'mcp__test__append_note', input: { note: 'hi' } },
        { id: 'toolu_m3', name: 'mcp__test__picture', input: {} },
      ]),
      toolUse([{ id: 'toolu_m4', name: 'mcp__test__add_tool', input: {} }]),
      toolUse([{ id: 'toolu_m5', name: 'mcp__test__extra_1', input: {} }]),
      text('Looked up, noted, pictured, extended.'),
    ],
    input: () => ({ prompt: 'Use the MCP tools', mcpServers: { test: stdioTestServer() } }),
    deps: () => {
      const mcp = createMcpRuntime();
      return { deps: { mcp }, close: () => mcp.close() };
    },
    exit: 'completed',
  },
  {
    // A session: an approved call, an answer, a message, a denied call, an answer, endSession.
    name: 'session-approvals',
    steps: () => [
      toolUse([{ id: 'toolu_w1', name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }]),
      text('Wrote a.txt.'),
      toolUse([{ id: 'toolu_w2', name: 'write_file', input: { path: 'b.txt', content: 'b\n' } }]),
      text('b.txt was denied; left as is.'),
    ],
    input: () => ({ prompt: 'Write a.txt', session: true, approveMutating: true }),
    drive: async (handle) => {
      await approvalPending(handle, 'toolu_w1');
      await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_w1' }] });
      await waitForState(handle, (s) => s.status === 'awaiting_input');
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Now write b.txt' }] });
      await approvalPending(handle, 'toolu_w2');
      await handle.executeUpdate(denyToolUpdate, { args: [{ toolUseId: 'toolu_w2', reason: 'not b' }] });
      await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 4);
      await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    },
    exit: 'completed',
  },
  {
    // An interrupt while a model call is in flight: the call is cancelled and its end recorded.
    name: 'interrupted',
    steps: () => [
      toolUse([{ id: 'toolu_g1', name: 'glob', input: { pattern: '*' } }]),
      delayed(60_000, text('never sent')),
    ],
    input: () => ({ prompt: 'Look, then think for long' }),
    drive: async (handle) => {
      await modelCallStarted(handle, 2);
      await handle.signal(interruptSignal, { reason: 'enough' });
    },
    exit: 'interrupted',
  },
  {
    // claude-sonnet-5-5: 100k in × $2/M + 10k out × $10/M = $0.30, over the $0.25 budget.
    name: 'max-budget',
    steps: () => [
      toolUse([{ id: 'toolu_b1', name: 'glob', input: { pattern: '*' } }], {
        usage: { inputTokens: 100_000, outputTokens: 10_000 },
      }),
      text('never reached'),
    ],
    input: () => ({ prompt: 'Spend', model: 'claude-sonnet-5-5', maxBudgetUsd: 0.25 }),
    exit: 'max_budget',
  },
  {
    name: 'refused',
    steps: () => [
      toolUse([{ id: 'toolu_r1', name: 'write_file', input: { path: 'x.txt', content: 'x' } }], {
        text: 'I will not do that.',
        stopReason: 'refusal',
      }),
    ],
    input: () => ({ prompt: 'Do the forbidden thing' }),
    exit: 'refused',
  },
  {
    // A model that fails for good: the workflow fails (DurableAgent.RunFailed) with the result in its details.
    name: 'failed',
    steps: () => [fail(ApplicationFailure.nonRetryable('the request was malformed', 'ModelError.BadRequest'))],
    input: () => ({ prompt: 'Fail' }),
    exit: 'failed',
  },
  {
    // A Temporal cancel while a call waits for approval: the workflow ends Canceled, its result in the memo.
    name: 'cancelled',
    steps: () => [toolUse([{ id: 'toolu_c1', name: 'write_file', input: { path: 'c.txt', content: 'c' } }])],
    input: () => ({ prompt: 'Write c.txt', approveMutating: true }),
    drive: async (handle) => {
      await approvalPending(handle, 'toolu_c1');
      await handle.cancel();
    },
    exit: 'cancelled',
  },
  {
    // Parallel calls of one turn on both paths of a tool call (two run at once, one waits for its
    // approval), each followed by a PostToolUse hook activity, then a second turn with a failing call
    // (PostToolUseFailure). Recorded with 0.2.0 (7601f72), whose tool turn was all `async` frames.
    name: 'parallel-hooks',
    files: { 'README.md': '# demo\nhello world\n' },
    steps: () => [
      toolUse([
        { id: 'toolu_p1', name: 'read_file', input: { path: 'README.md' } },
        { id: 'toolu_p2', name: 'write_file', input: { path: 'p.txt', content: 'p\n' } },
        { id: 'toolu_p3', name: 'glob', input: { pattern: '*' } },
      ]),
      toolUse([
        { id: 'toolu_p4', name: 'read_file', input: { path: 'missing.txt' } },
        { id: 'toolu_p5', name: 'grep', input: { pattern: 'hello', path: '.' } },
      ]),
      text('Read, wrote p.txt and searched.'),
    ],
    input: () => ({ prompt: 'Read, write and search', approveMutating: true }),
    deps: () => ({
      deps: {
        hooks: {
          PostToolUse: [{ run: () => ({ hookSpecificOutput: { additionalContext: 'checked' } }) }],
          PostToolUseFailure: [{ run: () => ({}) }],
        },
      },
      close: async () => {},
    }),
    drive: async (handle) => {
      await approvalPending(handle, 'toolu_p2');
      await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_p2' }] });
    },
    exit: 'completed',
  },
  {
    // Hands over to a new execution at 50 events (the least allowed): each execution's history is recorded.
    name: 'continue-as-new',
    files: { 'notes.txt': 'one\ntwo\n' },
    steps: () => [
      toolUse([{ id: 'toolu_n1', name: 'read_file', input: { path: 'notes.txt' } }]),
      ...[2, 3, 4, 5, 6, 7].map((n) =>
        toolUse([{ id: `toolu_n${n}`, name: 'write_file', input: { path: `part-${n}.txt`, content: `${n}\n` } }]),
      ),
      toolUse([{ id: 'toolu_n8', name: 'grep', input: { pattern: '7', path: '.' } }]),
      text('Read, wrote six parts and searched.'),
    ],
    input: () => ({ prompt: 'Read, write, search', continueAsNewAfter: { events: 50 } }),
    exit: 'completed',
  },
];

export async function writeFiles(workspace: string, files: Record<string, string> | undefined): Promise<void> {
  for (const [name, content] of Object.entries(files ?? {})) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true });
    await fs.writeFile(path.join(workspace, name), content);
  }
}

export function modelOf(scenario: Scenario): ScriptedModel {
  return new ScriptedModel(scenario.steps());
}
