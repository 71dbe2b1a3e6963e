import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createHookActivities, type HookActivityDeps } from '../../src/activities/hooks';
import type { HookEventName, HookOutcome, HookPlan, RunHookInput } from '../../src/shared/hooks-io';
import { makeWorkspace } from '../tools/helpers';

/**
 * A hook test bench: a workspace with an `outside` sibling, a worker-wide settings file beside
 * them, hook scripts written as real files, and the activities run in a MockActivityEnvironment.
 */
export interface HookBench {
  ws: string;
  outside: string;
  workerSettings: string;
  /** Writes an executable script (bash unless it has its own #! line) and returns its absolute path. */
  script(name: string, body: string): string;
  /** Writes the worker-wide settings file. */
  workerHooks(hooks: Partial<Record<HookEventName, unknown[]>> | string): void;
  /** Writes the workspace's `.durable-agent/settings.json`. */
  workspaceHooks(hooks: Partial<Record<HookEventName, unknown[]>> | string): void;
  run(input: Partial<RunHookInput> & Pick<RunHookInput, 'event'>, deps?: HookActivityDeps): Promise<HookOutcome>;
  events(deps?: HookActivityDeps): Promise<HookPlan>;
  cleanup(): void;
}

export function makeHookBench(): HookBench {
  const { ws, outside, cleanup } = makeWorkspace();
  const root = path.dirname(ws);
  const workerSettings = path.join(root, 'worker-settings.json');
  const scripts = path.join(root, 'scripts');
  mkdirSync(scripts);
  const settingsText = (hooks: Partial<Record<HookEventName, unknown[]>> | string) =>
    typeof hooks === 'string' ? hooks : JSON.stringify({ hooks });
  const bench: HookBench = {
    ws,
    outside,
    workerSettings,
    script(name, body) {
      const file = path.join(scripts, name);
      writeFileSync(file, body.startsWith('#!') ? body : `#!/bin/bash\n${body}\n`);
      chmodSync(file, 0o755);
      return file;
    },
    workerHooks(hooks) {
      writeFileSync(workerSettings, settingsText(hooks));
    },
    workspaceHooks(hooks) {
      mkdirSync(path.join(ws, '.durable-agent'), { recursive: true });
      writeFileSync(path.join(ws, '.durable-agent', 'settings.json'), settingsText(hooks));
    },
    async run(input, deps = {}) {
      const activities = createHookActivities({ settingsFile: workerSettings, heartbeatIntervalMs: 100, ...deps });
      const env = new MockActivityEnvironment();
      return env.run(activities.runHook, { runId: 'wf-test', workspace: ws, ...input });
    },
    async events(deps = {}) {
      const activities = createHookActivities({ settingsFile: workerSettings, ...deps });
      return new MockActivityEnvironment().run(activities.hookEvents, { workspace: ws });
    },
    cleanup,
  };
  return bench;
}

/** One matcher group of command hooks, in Claude Code's shape. */
export function group(matcher: string | undefined, ...commands: (string | { command: string; timeout?: number })[]) {
  return {
    ...(matcher !== undefined ? { matcher } : {}),
    hooks: commands.map((c) => (typeof c === 'string' ? { type: 'command', command: c } : { type: 'command', ...c })),
  };
}

/** A script printing this JSON on stdout and exiting 0. */
export function printsJson(value: unknown): string {
  return `cat > /dev/null\ncat <<'EOF'\n${JSON.stringify(value)}\nEOF`;
}
