import { lstatSync, promises as fs, realpathSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { HOOK_EVENTS, MAX_HOOK_TIMEOUT_MS, type HookEventName } from '../shared/hooks-io';
import { openRegularFile, withLocated } from '../safe-fs';
import { isInside } from '../safe-fs/workspace';
import { compileMatcher, matcherNames, type ToolMatcher } from './matcher';
import type { HookSource } from './types';

/**
 * Hook settings files: Claude Code's `hooks` shape, read from the worker-wide file
 * (`DURABLE_AGENT_SETTINGS`, default `~/.durable-agent/settings.json`) and from the run's workspace
 * (`.durable-agent/settings.json`). Both are read at each use, so an edit applies to the next event.
 * A file that cannot be used is never a crash: it becomes {@link LoadedSettings.invalid}, which makes
 * PreToolUse deny every call until it is fixed (it may have held the guard that mattered).
 */

export const SETTINGS_ENV_VAR = 'DURABLE_AGENT_SETTINGS';
/** Where the workspace's settings are, relative to the workspace. */
export const WORKSPACE_SETTINGS_PATH = '.durable-agent/settings.json';
/** Settings files above this size are refused unread (a hostile workspace may hold a huge one). */
export const MAX_SETTINGS_BYTES = 1024 * 1024;
/** Hooks per event per file: every one of them may be a process started for each tool call. */
export const MAX_HOOKS_PER_EVENT = 32;
export const MAX_COMMAND_CHARS = 64 * 1024;

/** The worker-wide settings file: `DURABLE_AGENT_SETTINGS`, else `~/.durable-agent/settings.json`. */
export function workerSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[SETTINGS_ENV_VAR]?.trim();
  return configured ? path.resolve(configured) : path.join(os.homedir(), '.durable-agent', 'settings.json');
}

const hookSchema = z.looseObject({
  type: z.string(),
  command: z.string().min(1).max(MAX_COMMAND_CHARS).optional(),
  timeout: z
    .number()
    .positive()
    .max(MAX_HOOK_TIMEOUT_MS / 1000)
    .optional(),
  /** durable-agent's own key: run this worker hook in the bash sandbox (workspace hooks always are). */
  sandbox: z.boolean().optional(),
});
const groupSchema = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(hookSchema).max(MAX_HOOKS_PER_EVENT),
});
const settingsSchema = z.looseObject({
  hooks: z.record(z.string(), z.array(groupSchema).max(MAX_HOOKS_PER_EVENT)).optional(),
});

/** One hook of a settings file, ready to run. */
export interface SettingsHook {
  source: Exclude<HookSource, 'function'>;
  /** Matches the tool name (always true for UserPromptSubmit and Stop). */
  matches: ToolMatcher;
  /** The shell command; absent for a hook type durable-agent cannot run (`unsupported` says which). */
  command?: string;
  unsupported?: string;
  timeoutMs?: number;
  /** Runs in the bash tool's sandbox: every workspace hook, and worker hooks with `"sandbox": true`. */
  sandboxed: boolean;
  /** The matcher as written, for the tool-name check. */
  matcher?: string;
}

export interface LoadedSettings {
  source: Exclude<HookSource, 'function'>;
  /** The file, as shown in reports. */
  file: string;
  hooks: Partial<Record<HookEventName, SettingsHook[]>>;
  /** Why the file cannot be used (its hooks are then none, and PreToolUse fails closed). */
  invalid?: string;
  /** Things in a valid file that are ignored (unknown events), for the operator. */
  warnings: string[];
}

const TOOL_EVENTS: readonly HookEventName[] = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure'];

function issuesText(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`)
    .join('; ');
}

/** Parses and validates a settings file's text (pure; exported for tests). */
export function parseSettings(text: string, source: LoadedSettings['source'], file: string): LoadedSettings {
  const empty: LoadedSettings = { source, file, hooks: {}, warnings: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ...empty, invalid: `${file} is not valid JSON: ${(error as Error).message}` };
  }
  const parsed = settingsSchema.safeParse(json);
  if (!parsed.success) return { ...empty, invalid: `${file} has invalid hook settings: ${issuesText(parsed.error)}` };
  const loaded: LoadedSettings = { ...empty, hooks: {}, warnings: [] };
  for (const [event, groups] of Object.entries(parsed.data.hooks ?? {})) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      loaded.warnings.push(
        `${file}: '${event}' hooks are ignored: durable-agent runs ${HOOK_EVENTS.join(', ')} hooks.`,
      );
      continue;
    }
    const name = event as HookEventName;
    const list: SettingsHook[] = [];
    for (const group of groups) {
      let matches: ToolMatcher;
      try {
        matches = TOOL_EVENTS.includes(name) ? compileMatcher(group.matcher) : () => true;
      } catch (error) {
        return { ...empty, invalid: `${file}: ${event}: ${(error as Error).message}` };
      }
      for (const hook of group.hooks) {
        const base = {
          source,
          matches,
          sandboxed: source === 'workspace' || hook.sandbox === true,
          ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
        };
        if (hook.type !== 'command' || hook.command === undefined) {
          const what =
            hook.type === 'command' ? 'a command hook without a command' : `hooks of type '${hook.type.slice(0, 40)}'`;
          list.push({ ...base, unsupported: `${what} cannot be run (durable-agent runs type 'command')` });
          continue;
        }
        // Claude Code runs identical commands of one event once.
        if (list.some((h) => h.command === hook.command && h.matcher === group.matcher)) continue;
        list.push({
          ...base,
          command: hook.command,
          ...(hook.timeout !== undefined ? { timeoutMs: Math.round(hook.timeout * 1000) } : {}),
        });
      }
    }
    if (list.length > MAX_HOOKS_PER_EVENT) {
      return { ...empty, invalid: `${file}: ${event} has ${list.length} hooks; at most ${MAX_HOOKS_PER_EVENT}` };
    }
    if (list.length) loaded.hooks[name] = list;
  }
  return loaded;
}

/** Matchers naming tools this worker does not have (a Claude Code `Bash` where the tool is `bash`). */
export function unknownToolWarnings(settings: LoadedSettings, toolNames: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const event of TOOL_EVENTS) {
    for (const hook of settings.hooks[event] ?? []) {
      // MCP tools (`mcp__<server>__<tool>`) are known only per run, from its servers: not warned about here.
      const unknown = (matcherNames(hook.matcher) ?? []).filter(
        (n) => !toolNames.includes(n) && !n.startsWith('mcp__'),
      );
      if (unknown.length) {
        const line = `${settings.file}: ${event} matcher '${hook.matcher}' names no tool of this worker (${unknown.join(', ')}); tools: ${toolNames.join(', ')}. Matchers are case-sensitive.`;
        if (!warnings.includes(line)) warnings.push(line);
      }
    }
  }
  return warnings;
}

/**
 * Whether anything (a file, a folder, a link, even a dangling one) is at `p`, without an error object
 * when nothing is; other errors (ENOTDIR, EACCES) are thrown.
 */
function entryThere(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
}

/** The worker-wide file; a missing file means no hooks. */
export async function loadWorkerSettings(file: string): Promise<LoadedSettings | undefined> {
  let text: string;
  try {
    // Synchronous, and no error object when nothing is there (the usual case): see `ownerOf`. The
    // lstat first: only it reports a path under a regular file (ENOTDIR) the same way on every Node.
    if (!entryThere(file)) return undefined;
    const stat = statSync(file);
    if (!stat.isFile()) return invalidFile('worker', file, 'it is not a regular file');
    if (stat.size > MAX_SETTINGS_BYTES) return invalidFile('worker', file, `it is over ${MAX_SETTINGS_BYTES} bytes`);
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return invalidFile('worker', file, (error as Error).message);
  }
  return parseSettings(text, 'worker', file);
}

/**
 * The workspace's file, read the way the file tools read: walked by descriptor from the workspace,
 * symlinks leading outside refused, only a regular file of bounded size (the model can write this
 * file, or make it a FIFO, a device or a link to a secret).
 */
export async function loadWorkspaceSettings(
  workspace: string,
  relative = WORKSPACE_SETTINGS_PATH,
): Promise<LoadedSettings | undefined> {
  const shown = path.join(workspace, relative);
  try {
    if (!entryThere(shown)) return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
  }
  let text: string | undefined;
  try {
    text = await withLocated(workspace, relative, { followLinks: true }, async (located) => {
      if (!located.stat) return undefined;
      const { handle, stat } = await openRegularFile(located);
      try {
        if (stat.size > MAX_SETTINGS_BYTES) throw new Error(`it is over ${MAX_SETTINGS_BYTES} bytes`);
        const buffer = Buffer.alloc(stat.size);
        const { bytesRead } = await handle.read(buffer, 0, stat.size, 0);
        return buffer.subarray(0, bytesRead).toString('utf8');
      } finally {
        await handle.close();
      }
    });
  } catch (error) {
    return invalidFile('workspace', shown, (error as Error).message);
  }
  return text === undefined ? undefined : parseSettings(text, 'workspace', shown);
}

/**
 * Both files for a run, the workspace's first. A worker file that lies in the workspace (the worker's
 * home used as the workspace, or `DURABLE_AGENT_SETTINGS` pointing into it) is a file the model can
 * write: it is read as a workspace file (sandboxed hooks that cannot allow), once, and said so.
 */
export async function loadRunSettings(workspace: string, workerFile: string): Promise<LoadedSettings[]> {
  let realRoot: string | undefined;
  let realWorker: string | undefined;
  try {
    realRoot = realpathSync.native(workspace);
    if (entryThere(workerFile)) realWorker = realpathSync.native(workerFile);
  } catch {
    // No workspace (the run fails on its own) or no worker file (nothing to place).
  }
  const files: (LoadedSettings | undefined)[] = [await loadWorkspaceSettings(workspace)];
  if (realRoot !== undefined && realWorker !== undefined && isInside(realRoot, realWorker)) {
    const relative = path.relative(realRoot, realWorker);
    const why =
      `the worker settings file ${workerFile} lies in the run's workspace, which the model can write: ` +
      'its hooks run as workspace hooks (sandboxed, and their allow grants nothing)';
    const inside = relative === WORKSPACE_SETTINGS_PATH ? files[0] : await loadWorkspaceSettings(realRoot, relative);
    if (inside) inside.warnings.push(why);
    if (inside !== files[0]) files.push(inside);
  } else {
    files.push(await loadWorkerSettings(workerFile));
  }
  return files.filter((f): f is LoadedSettings => f !== undefined);
}

function invalidFile(source: LoadedSettings['source'], file: string, why: string): LoadedSettings {
  return { source, file, hooks: {}, warnings: [], invalid: `${file} cannot be read: ${why}` };
}
