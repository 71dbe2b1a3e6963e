import { ApplicationFailure, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_ANTHROPIC_MODEL, ErrorTypes, MAX_CONVERSATION_BYTES } from '../../shared/constants';
import { DEFAULT_COMPACT_AT_BYTES, contextWindowOf } from '../../shared/model-limits';
import { hasKnownPrice } from '../../shared/pricing';
import {
  BUILTIN_SIDE_EFFECTS,
  BUILTIN_TOOL_NAMES,
  DONE_TOOL_NAME,
  type Permission,
} from '../../shared/run/tool-policy';
import {
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS,
  DEFAULTS,
  parseRunInput,
  type AgentRunInput,
} from '../../shared/run/input';
import { mcpServerKey } from '../../shared/mcp';
import { describeUndecodable, isUndecodable } from '../../shared/undecodable';

export type ParsedInput = Extract<ReturnType<typeof parseRunInput>, { ok: true }>['input'];

/**
 * The run input, validated as the client validated it, or a non-retryable failure that says what
 * is wrong. The continuation state is internal: only an execution that was continued as new may
 * carry it.
 */
export function validatedInput(rawInput: AgentRunInput): ParsedInput {
  if (isUndecodable(rawInput) && workflowInfo().continuedFromExecutionRunId) {
    // This input was written by the run's previous execution, not a client: most likely this worker
    // lacks a codec key another worker has. Failing the task lets a worker with the key take it.
    throw new Error(`this execution's input (carried over by continue-as-new) is ${describeUndecodable(rawInput)}`);
  }
  const parsed = parseRunInput(rawInput);
  if (!parsed.ok) throw ApplicationFailure.nonRetryable(parsed.error, ErrorTypes.InvalidInput);
  const input = parsed.input;
  if (input.resume && !workflowInfo().continuedFromExecutionRunId) {
    throw ApplicationFailure.nonRetryable(
      'Invalid run input: resume is internal state that a run carries into its next execution; leave it out',
      ErrorTypes.InvalidInput,
    );
  }
  const model = input.model ?? DEFAULT_ANTHROPIC_MODEL;
  if (input.maxBudgetUsd !== undefined && !hasKnownPrice(model)) {
    throw ApplicationFailure.nonRetryable(
      `Invalid run input: maxBudgetUsd cannot be enforced because the price of model '${model}' is unknown; ` +
        'use a model from the price table or drop maxBudgetUsd',
      ErrorTypes.InvalidInput,
    );
  }
  return input;
}

/** The run's settings with their defaults applied. */
export function settingsOf(input: ParsedInput) {
  const model = input.model ?? DEFAULT_ANTHROPIC_MODEL;
  const compactAt = input.compactAtBytes ?? DEFAULT_COMPACT_AT_BYTES;
  const requireDone = input.requireDoneTool ?? false;
  return {
    model,
    maxIterations: input.maxIterations ?? DEFAULTS.maxIterations,
    /** A session's bound across all its messages (none unless set); `maxIterations` then bounds each message. */
    maxSessionIterations: input.maxSessionIterations,
    toolProtocol: input.toolProtocol ?? 'native',
    maxTokens: input.maxTokens ?? DEFAULTS.maxTokens,
    contextWindow: input.contextWindowTokens ?? contextWindowOf(model),
    // Compaction starts well below the conversation's hard cap.
    softCapBytes: Math.min(compactAt, Math.floor(MAX_CONVERSATION_BYTES * 0.75)),
    session: input.session ?? false,
    requireDone,
    /**
     * Under the text protocol without a tool list, the worker offers all its tools (custom ones too),
     * which the workflow does not know by name: any name parses, and the worker answers one it lacks.
     */
    openTextTools: input.toolProtocol === 'xml' && input.tools === undefined,
    /** Tools the model may call under the text protocol (`toolProtocol: 'xml'`); undefined: native tool calls. */
    textTools:
      input.toolProtocol === 'xml'
        ? [...(input.tools ?? BUILTIN_TOOL_NAMES), ...(requireDone ? [DONE_TOOL_NAME] : [])]
        : undefined,
    approvalTimeoutMs: (input.approvalTimeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS) * 1000,
    sessionIdleMs: (input.sessionIdleTimeoutSeconds ?? DEFAULT_SESSION_IDLE_TIMEOUT_SECONDS) * 1000,
    /**
     * allow / deny / ask per tool (`mcp__<server>` covers all of a server's tools); with
     * `approveMutating`, mutating tools (and unknown ones) default to ask. An MCP tool's class
     * comes from its annotations (`sideEffect`).
     */
    permissionFor: (name: string, sideEffect?: string): Permission =>
      ownEntry(input.permissions, name) ??
      permissionOfServer(input.permissions, name) ??
      (input.approveMutating && (sideEffect ?? ownEntry(BUILTIN_SIDE_EFFECTS, name) ?? 'mutating') !== 'read_only'
        ? 'ask'
        : 'allow'),
  };
}

/**
 * The table's own entry for `key`, never one inherited from `Object.prototype`: a tool named
 * `constructor` or `toString` must not find a function where a permission belongs.
 */
export function ownEntry<V>(table: Readonly<Record<string, V>> | undefined, key: string): V | undefined {
  return table !== undefined && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}

function permissionOfServer(permissions: Record<string, Permission> | undefined, name: string): Permission | undefined {
  const key = permissions ? mcpServerKey(name) : undefined;
  return key !== undefined ? ownEntry(permissions, key) : undefined;
}

export type RunSettings = ReturnType<typeof settingsOf>;

/** A run's `tools` as the worker's registry takes them: MCP names left out (the run's MCP tools are offered apart). */
export function workerToolNames(tools: readonly string[] | undefined): string[] | undefined {
  return tools?.filter((name) => !name.startsWith('mcp__'));
}
