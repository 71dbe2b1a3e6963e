import { ActivityCancellationType, proxyActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { cutChars } from '../../shared/bounds';
import type { ToolUseBlock } from '../../shared/messages';
import type { RunEventInput } from '../../shared/run';
import {
  HOOK_ACTIVITY_TIMEOUT_MS,
  HOOK_HEARTBEAT_TIMEOUT_MS,
  type HookEventName,
  type HookOutcome,
  type RunHookInput,
} from '../../shared/hooks-io';
import { failureMessage, stopping } from './failures';
import { agentActivities } from './activity-proxy';

/** Longest hook text (a reason, added context) that reaches the model or the events. */
const HOOK_TEXT_CHARS = 8_000;
/** Stop hooks may keep a run going this many times in a row; then the run stops anyway. */
export const MAX_STOP_BLOCKS = 8;

/** What a PreToolUse hook decided for one call. */
export type PreToolDecision =
  { kind: 'deny'; reason: string } | { kind: 'run'; input: unknown; ask: boolean; allowed: boolean; context?: string };

/** The event a finished tool call raises: PostToolUseFailure for an error result, else PostToolUse. */
export function postToolEvent(isError: boolean): 'PostToolUse' | 'PostToolUseFailure' {
  return isError ? 'PostToolUseFailure' : 'PostToolUse';
}

/** The decision when no PreToolUse hook has a say: run the call as the model asked. */
export function runAsAsked(toolUse: ToolUseBlock): PreToolDecision {
  return { kind: 'run', input: toolUse.input, ask: false, allowed: false };
}

/**
 * The run's hooks (docs/hooks.md): each event with hooks is one `runHook` activity
 * per occurrence, with ONE attempt, so a hook is never silently run twice for one call. A hook
 * activity that fails or times out (a lost worker included) fails closed for PreToolUse and is
 * reported; for the other events it is reported and the run goes on. Events without hooks
 * schedule nothing: the worker said at run start which events have them.
 */
export class Hooks {
  private readonly activities: ActivityInterfaceFor<Pick<Activities, 'runHook'>>;
  private events: ReadonlySet<string> = new Set();

  constructor(
    private readonly base: { runId: string; workspace?: string; network: boolean },
    private readonly emit: (event: RunEventInput) => void,
    /** Stop hooks that kept the run going in a row: the run's state, carried across continue-as-new. */
    private readonly memory: { stopBlocks: number },
  ) {
    this.activities = agentActivities(
      proxyActivities<Activities>({
        startToCloseTimeout: HOOK_ACTIVITY_TIMEOUT_MS,
        heartbeatTimeout: HOOK_HEARTBEAT_TIMEOUT_MS,
        retry: { maximumAttempts: 1 },
        cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      }),
    );
  }

  /** The workspace's real path recorded at run start: every later hook runs there. */
  useWorkspace(workspace: string): void {
    this.base.workspace = workspace;
  }

  /** The events with hooks, as the worker reported them at run start. */
  enable(events: readonly string[]): void {
    this.events = new Set(events);
  }

  has(event: HookEventName): boolean {
    return this.events.has(event);
  }

  /** PreToolUse: deny (a hook said so, or failed), or run with the input the hooks left. */
  async beforeTool(toolUse: ToolUseBlock): Promise<PreToolDecision> {
    if (!this.has('PreToolUse')) return runAsAsked(toolUse);
    const outcome = await this.run(
      { event: 'PreToolUse', toolName: toolUse.name, toolInput: toolUse.input, toolUseId: toolUse.id },
      `PreToolUse ${toolUse.name}`,
    );
    if (outcome === undefined) {
      return { kind: 'deny', reason: 'a PreToolUse hook failed, so the call was not run (hooks fail closed)' };
    }
    if (outcome.stopRun !== undefined) {
      return { kind: 'deny', reason: 'a hook ended the run ("continue": false); the call was not run' };
    }
    if (outcome.decision === 'deny') {
      return { kind: 'deny', reason: text(outcome.reason) || 'a PreToolUse hook denied this call' };
    }
    return {
      kind: 'run',
      input: outcome.updatedInput ?? toolUse.input,
      ask: outcome.decision === 'ask',
      allowed: outcome.decision === 'allow',
      ...(outcome.additionalContext ? { context: text(outcome.additionalContext) } : {}),
    };
  }

  /** PostToolUse / PostToolUseFailure: feedback and context the model sees with the result. */
  async afterTool(toolUse: ToolUseBlock, input: unknown, content: string, isError: boolean): Promise<string[]> {
    const event = postToolEvent(isError);
    if (!this.has(event)) return [];
    const outcome = await this.run(
      {
        event,
        toolName: toolUse.name,
        toolInput: input,
        toolUseId: toolUse.id,
        toolResult: { content: cutChars(content, 64_000), isError },
      },
      `${event} ${toolUse.name}`,
    );
    if (!outcome) return [];
    return [
      ...(outcome.block ? [`[hook feedback] ${text(outcome.reason) || 'a hook flagged this result'}`] : []),
      ...(outcome.additionalContext ? [`[hook context] ${text(outcome.additionalContext)}`] : []),
    ];
  }

  /** UserPromptSubmit: the prompt is blocked (with the reason for the operator), or goes on with added context. */
  async promptSubmitted(prompt: string): Promise<{ blocked?: string; context?: string }> {
    if (!this.has('UserPromptSubmit')) return {};
    const outcome = await this.run({ event: 'UserPromptSubmit', prompt: cutChars(prompt, 64_000) }, 'UserPromptSubmit');
    if (!outcome) return {};
    if (outcome.block) return { blocked: text(outcome.reason) || 'a UserPromptSubmit hook blocked it' };
    return outcome.additionalContext ? { context: text(outcome.additionalContext) } : {};
  }

  /** Stop: a hook may keep the run going; its reason is the model's next instruction. */
  async stopping(): Promise<string | undefined> {
    if (!this.has('Stop')) return undefined;
    if (this.memory.stopBlocks >= MAX_STOP_BLOCKS) {
      this.emit({ kind: 'notice', message: `Stop hooks kept the run going ${MAX_STOP_BLOCKS} times; stopping now` });
      this.memory.stopBlocks = 0;
      return undefined;
    }
    const outcome = await this.run({ event: 'Stop', stopHookActive: this.memory.stopBlocks > 0 }, 'Stop');
    if (!outcome?.block) {
      this.memory.stopBlocks = 0;
      return undefined;
    }
    this.memory.stopBlocks += 1;
    const reason = text(outcome.reason) || 'a Stop hook asked you to continue';
    this.emit({ kind: 'notice', message: `hook: Stop blocked; continuing: ${reason}` });
    return reason;
  }

  /** A hook asked to end the run (`"continue": false`): the reason, once. */
  stopRunRequested: string | undefined;

  /** One hook activity; undefined when it failed (reported). */
  private async run(
    event: Omit<RunHookInput, 'runId' | 'workspace' | 'network'>,
    label: string,
  ): Promise<HookOutcome | undefined> {
    let outcome: HookOutcome;
    try {
      outcome = await this.activities.runHook.executeWithOptions({ summary: `hook ${cutChars(label, 100)}` }, [
        {
          ...event,
          runId: this.base.runId,
          ...(this.base.workspace ? { workspace: this.base.workspace } : {}),
          ...(this.base.network ? { network: true } : {}),
        },
      ]);
    } catch (err) {
      if (stopping(err)) throw err;
      this.emit({ kind: 'notice', message: `hook: ${label} failed: ${failureMessage(err)}` });
      return undefined;
    }
    for (const report of outcome.reports ?? []) this.emit({ kind: 'notice', message: `hook: ${label}: ${report}` });
    if (outcome.stopRun !== undefined && this.stopRunRequested === undefined) {
      this.stopRunRequested = text(outcome.stopRun) || `a ${label} hook ended the run`;
    }
    return outcome;
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? cutChars(value.trim(), HOOK_TEXT_CHARS) : '';
}
