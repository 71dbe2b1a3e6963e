import { MockActivityEnvironment } from '@temporalio/testing';
import * as path from 'node:path';
import { createContextActivities } from '../../src/activities/context';
import { MAX_SKILLS, MAX_WARNINGS } from '../../src/context';
import { jsonBytes, utf8Length } from '../../src/shared/bounds';
import { MAX_SYSTEM_PROMPT_BYTES } from '../../src/shared/constants';
import type { AssembleContextInput, AssembledContext } from '../../src/shared/context-io';
import { createDefaultRegistry } from '../../src/tools';
import { makeRepo, skillFile, writeTree } from './helpers';

let repo: ReturnType<typeof makeRepo>;
beforeEach(() => {
  repo = makeRepo();
});
afterEach(() => repo.cleanup());

const input = (extra: Partial<AssembleContextInput> = {}): AssembleContextInput => ({
  startedAt: '2030-06-15T12:00:00Z',
  model: 'claude-haiku-5-5',
  ...extra,
});

/** Runs the activity in Temporal's activity context (heartbeat, cancellation signal, info). */
const runActivity = (activity: (input: AssembleContextInput) => Promise<AssembledContext>, arg: AssembleContextInput) =>
  new MockActivityEnvironment().run(activity, arg) as Promise<AssembledContext>;

describe('the assembleContext activity', () => {
  test('runs as an activity and returns plain JSON; a run without a workspace uses the worker default', async () => {
    writeTree(repo.ws, { 'AGENTS.md': 'worker default rules\n' });
    const activities = createContextActivities({ tools: createDefaultRegistry(), defaultWorkspace: repo.ws });
    const result = await runActivity(
      activities.assembleContext,
      input({ toolNames: ['read_file', 'done'], systemPrompt: 'Be brief.' }),
    );
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    expect(result.system).toContain('worker default rules');
    expect(result.system).toContain(`Workspace: ${repo.ws}`);
    expect(result.system).toContain('the run started on 2030-06-15 (Saturday) at 12:00 UTC');
    expect(result.system).toContain('- done: Call this when the task is completely finished');
    expect(result.system.endsWith('# User instructions\n\nBe brief.')).toBe(true);
    expect(result.sources.map((s) => s.kind)).toEqual([
      'default',
      'instructions',
      'default',
      'memory',
      'default',
      'user',
    ]);

    const named = await runActivity(activities.assembleContext, input({ workspace: repo.repo }));
    expect(named.system).toContain(`Workspace: ${repo.repo}`);
    expect(named.system).not.toContain('worker default rules');
  });

  test('the sandbox status comes from the worker', async () => {
    const tools = createDefaultRegistry();
    const off = createContextActivities({ tools, defaultWorkspace: repo.ws, sandboxMode: () => 'off' });
    const on = createContextActivities({ tools, defaultWorkspace: repo.ws, sandboxMode: () => 'bwrap' });
    expect((await runActivity(off.assembleContext, input())).system).toContain('bash runs commands without a sandbox');
    expect((await runActivity(on.assembleContext, input())).system).toContain('bash runs each command in a sandbox');
  });

  test('the result stays bounded whatever the workspace holds', async () => {
    const files: Record<string, string> = {
      'AGENTS.md': 'a'.repeat(100_000),
      'MEMORY.md': 'm'.repeat(100_000),
    };
    for (let i = 0; i < 150; i++) {
      files[`skills/s${i}/SKILL.md`] = skillFile(`name: s${i}\ndescription: ${'d'.repeat(1000)}`);
      files[`skills/bad${i}/SKILL.md`] = skillFile(`name: BAD-${'x'.repeat(500)}\ndescription: b`);
    }
    writeTree(repo.ws, files);
    writeTree(repo.repo, { 'CLAUDE.md': 'c'.repeat(100_000) });
    const activities = createContextActivities({ tools: createDefaultRegistry(), defaultWorkspace: repo.ws });
    const result = await runActivity(
      activities.assembleContext,
      input({ systemPrompt: 'u'.repeat(MAX_SYSTEM_PROMPT_BYTES / 2) }),
    );
    expect(utf8Length(result.system)).toBeLessThanOrEqual(MAX_SYSTEM_PROMPT_BYTES);
    expect(result.skills.length).toBeLessThanOrEqual(MAX_SKILLS);
    expect(result.warnings.length).toBe(MAX_WARNINGS);
    expect(result.warnings.at(-1)).toMatch(/^\d+ more warnings not shown$/);
    expect(result.warnings.every((w) => w.length <= 400)).toBe(true);
    expect(jsonBytes(result)).toBeLessThan(128 * 1024);
    expect(result.sources.find((s) => s.path === 'AGENTS.md')).toMatchObject({ truncated: true });
    expect(result.sources.find((s) => s.path === path.join(repo.repo, 'CLAUDE.md'))).toBeUndefined();
  });
});
