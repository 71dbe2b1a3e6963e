/**
 * docs/contracts.md is the one list of names outside programs rely on: every name the code defines
 * for them (handlers, failure types, search attributes, memo key, exit reasons, run-input fields,
 * CLI commands) must be on it, spelt as the code spells it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { COMMANDS } from '../../src/cli/commands';
import {
  CANCELLED_ERROR,
  CANCELLED_RESULT_MEMO,
  DEFAULT_NAMESPACE,
  DEFAULT_TASK_QUEUE,
  ErrorTypes,
  SEARCH_ATTRIBUTE_DEFINITIONS,
  TERMINAL_STATUSES,
  WORKFLOW_TYPE,
  agentRunInputSchema,
  approveToolUpdate,
  denyToolUpdate,
  endSessionUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
  stateQuery,
} from '../../src/shared';
import { AGENT_ACTIVITY_PREFIX } from '../../src/shared/activity-names';
import { MCP_TOOL_PREFIX } from '../../src/shared/mcp';
import { DEFAULT_MAX_SUBAGENT_DEPTH, TASK_TOOL_NAME } from '../../src/shared/subagents';

const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'contracts.md'), 'utf8');
const quoted = (name: string) => doc.includes(`\`${name}\``);
const missing = (names: readonly string[]) => names.filter((name) => !quoted(name));

test('names the workflow type, task queue, namespace and every handler', () => {
  const handlers = [interruptSignal, stateQuery, eventsQuery, sendMessageUpdate, approveToolUpdate, denyToolUpdate];
  expect(missing([WORKFLOW_TYPE, DEFAULT_TASK_QUEUE, DEFAULT_NAMESPACE, 'TEMPORAL_TASK_QUEUE'])).toEqual([]);
  expect(missing([...handlers, endSessionUpdate].map((h) => h.name))).toEqual([]);
});

/** The failure-type literals written in src/: each must be one of ErrorTypes (the list is derived, not copied). */
function failureTypeLiterals(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return failureTypeLiterals(full);
    if (!entry.name.endsWith('.ts')) return [];
    return [...readFileSync(full, 'utf8').matchAll(/['"`]((?:DurableAgent|ModelError)\.[A-Za-z]+)['"`]/g)].map(
      (m) => m[1]!,
    );
  });
}

test('every failure type written in src/ is one of ErrorTypes', () => {
  const literals = new Set(failureTypeLiterals(path.join(__dirname, '..', '..', 'src')));
  const known = new Set<string>(Object.values(ErrorTypes));
  expect(literals.size).toBeGreaterThanOrEqual(known.size);
  expect([...literals].filter((type) => !known.has(type))).toEqual([]);
});

test('names every failure type, exit reason, search attribute and the memo key', () => {
  const modelKinds = Object.values(ErrorTypes)
    .filter((type) => type.startsWith('ModelError.') && type !== ErrorTypes.ScriptExhausted)
    .map((type) => type.slice('ModelError.'.length));
  const agentTypes = Object.values(ErrorTypes).filter((type) => type.startsWith('DurableAgent.'));
  expect(missing([...agentTypes, CANCELLED_ERROR, ...modelKinds])).toEqual([]);
  expect(missing(TERMINAL_STATUSES)).toEqual([]);
  expect(missing(SEARCH_ATTRIBUTE_DEFINITIONS.map((a) => a.name))).toEqual([]);
  expect(missing([CANCELLED_RESULT_MEMO])).toEqual([]);
});

test('lists every run-input field and every CLI command', () => {
  const fields = Object.keys(agentRunInputSchema().shape).filter((field) => field !== 'resume');
  const inInputShape = doc.slice(doc.indexOf('**`AgentRunInput`**'), doc.indexOf('**`AgentRunState`**'));
  expect(fields.filter((field) => !new RegExp(`\\b${field}\\??[,} ]`).test(inInputShape))).toEqual([]);
  expect(COMMANDS.map((c) => c.name).filter((name) => !quoted(name))).toEqual([]);
});

test('names the activity prefix, the MCP tool naming and the subagent tool', () => {
  expect(doc).toContain(`\`${AGENT_ACTIVITY_PREFIX}<name>\``);
  expect(doc).toContain(`\`${MCP_TOOL_PREFIX}<server>__<tool>\``);
  expect(quoted(TASK_TOOL_NAME)).toBe(true);
  expect(doc).toContain(`default ${DEFAULT_MAX_SUBAGENT_DEPTH}`);
});
