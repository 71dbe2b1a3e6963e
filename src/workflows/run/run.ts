import { CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { CallModelOutput, PrepareRunInput } from '../../shared/activity-io';
import type { Message, ModelResponse } from '../../shared/messages';
import { DONE_TOOL_NAME } from '../../shared/run/tool-policy';
import type { AgentRunInput, RunContinuation, RunEventInput } from '../../shared/run';
import { hasKnownPrice } from '../../shared/pricing';
import { AnswerCheck } from '../calls/answer-check';
import { Hooks } from '../calls/hooks';
import { McpTools } from '../calls/mcp-tools';
import { ModelCalls } from '../calls/model-calls';
import { ToolCalls } from '../calls/tool-calls';
import { ToolChoicePolicy } from '../calls/tool-choice';
import { joinTree, subagentPlan, type SubagentPlan, type SubagentTree, type TreeBudget } from '../subagents';
import { Approvals } from './approvals';
import { describeContext } from './context-line';
import { RunCheckpoints } from './checkpoints';
import { RunState } from './run-state';
import { settingsOf, validatedInput, workerToolNames, type ParsedInput, type RunSettings } from './settings';
import { StatusBoard } from './status';

/**
 * One run of the agent, as one object: its input and settings, its state (`RunState`: everything
 * it remembers and carries across continue-as-new) and the means it acts with (the activity
 * callers in calls/, the status board, approvals, its subagents). The loop and its steps are
 * functions over it. Built once per execution by `Run.start`, from the input alone.
 */
export class Run {
  readonly input: ParsedInput;
  readonly plan: SubagentPlan;
  readonly settings: RunSettings;
  readonly state: RunState;
  readonly approvals = new Approvals();
  /** The run's workspace checkpoints (docs/checkpoints.md). */
  readonly checkpoints: RunCheckpoints;
  readonly board: StatusBoard;
  readonly tree: SubagentTree | undefined;
  /** The tree's budget that each model call reserves its expected cost against (subagents/budget.ts); undefined: none. */
  readonly budget: TreeBudget | undefined;
  /** A subagent reports its spending to its parent before it closes; undefined for other runs. */
  readonly settleTree: (() => Promise<void>) | undefined;
  /** Runs with `outputSchema`: checks each final answer (docs/output.md). */
  readonly answers: AnswerCheck | undefined;
  readonly hooks: Hooks;
  /** The run's MCP tools, under either tool protocol (docs/mcp.md). */
  readonly mcp: McpTools;
  readonly modelCalls: ModelCalls;
  readonly toolCalls: ToolCalls;
  /** The run's `toolChoice` over its calls, and the re-asking that stands in for it where a model cannot be forced. */
  readonly toolChoice: ToolChoicePolicy;
  /** The loop's scope: an interrupt cancels it (and with it the calls in flight). */
  readonly scope = new CancellationScope();
  /** A new run's start, waiting to go with its first model call (steps/start.ts); undefined once started. */
  startWith: PrepareRunInput | undefined;
  /** The model's answer of this iteration, waiting for the boundary's turn step (steps/boundary.ts). */
  pendingTurn: CallModelOutput | undefined;
  /** The iteration whose `model_call_started` was emitted last ({@link announceCall}). */
  private announcedCall = 0;
  /** This execution had a model call answered: the run's own continue-as-new limits count from then (steps/hand-over.ts). */
  calledModel = false;
  /** Set from the worker when its bash runs unsandboxed or cannot run: the run's details say so. */
  sandboxWarning: string | undefined;
  readonly emit: (event: RunEventInput) => void;

  private constructor(readonly rawInput: AgentRunInput) {
    const info = workflowInfo();
    // `task` is the workflow's own tool: the rest of the run (and the worker) sees the input without it.
    this.plan = subagentPlan(validatedInput(rawInput));
    const input = (this.input = this.plan.workerInput);
    const settings = (this.settings = settingsOf(input));
    const { model, requireDone, textTools } = settings;
    const state = (this.state = RunState.restore(input.resume, {
      conversationId: `${info.workflowId}/${info.runId}`,
      prompt: input.prompt,
      ...(input.conversation ? { conversation: input.conversation as Message[] } : {}),
      replaying: () => workflowInfo().unsafe.isReplaying,
      onEvent: () => this.board.showDetails(),
      priced: hasKnownPrice(model),
    }));
    state.pendingApprovals = () => this.approvals.size;
    this.board = new StatusBoard(state, {
      model,
      maxIterations: settings.maxIterations,
      maxBudgetUsd: input.maxBudgetUsd,
      pendingApprovals: () => this.approvals.list(),
      warning: () => this.sandboxWarning,
      context: () => (state.context ? describeContext(state.context, this.mcp.describe()) : undefined),
    });
    const emit = (this.emit = state.events.emit.bind(state.events));
    this.checkpoints = new RunCheckpoints(input.resume?.checkpoints, emit);
    this.toolChoice = new ToolChoicePolicy(input.toolChoice, model, requireDone);
    const joined = joinTree({
      input,
      plan: this.plan,
      model,
      state,
      approvals: this.approvals,
      resume: input.resume,
      emit,
      // A subagent's approval makes this run `awaiting_approval` too: its search attributes follow,
      // so `list --status awaiting_approval` (a visibility query) finds the parent that waits.
      statusChanged: () => this.board.index(),
      workspace: () => state.context?.workspace ?? input.workspace,
    });
    this.tree = joined.tree;
    this.settleTree = joined.settle;
    this.budget = joined.budget;
    this.answers = input.outputSchema ? new AnswerCheck(input.outputSchema, state.conversation, emit) : undefined;
    const place = { workspace: input.workspace, network: input.network ?? false };
    this.hooks = new Hooks({ runId: info.workflowId, ...place }, emit, state);
    const onlyMcp = input.tools?.filter((name) => name.startsWith('mcp__'));
    this.mcp = new McpTools({ ...place, ...(onlyMcp?.length ? { only: onlyMcp } : {}) }, emit, (specs, hash) =>
      this.modelCalls.useMcpTools(specs, hash),
    );
    this.modelCalls = new ModelCalls(
      state.conversation,
      {
        model,
        system: input.systemPrompt,
        // The worker's tools the run names (MCP tools travel apart: calls/mcp-tools.ts); without a list,
        // every tool of the worker, custom ones included, under either protocol.
        toolNames: workerToolNames(input.tools),
        extraToolNames: requireDone ? [DONE_TOOL_NAME] : undefined,
        maxTokens: settings.maxTokens,
        ...(textTools ? { toolProtocol: 'xml' as const } : {}),
        // Native structured output would turn `<tool_code>` replies into JSON: not under the text protocol.
        ...(input.outputSchema && !textTools ? { outputSchema: input.outputSchema } : {}),
        ...(input.toolChoice ? { toolChoice: this.toolChoice } : {}),
      },
      emit,
      state,
      input.timeouts,
      {
        ...(input.priority !== undefined ? { priorityKey: input.priority } : {}),
        ...(input.fairnessKey !== undefined ? { fairnessKey: input.fairnessKey } : {}),
      },
    );
    this.toolCalls = new ToolCalls(
      {
        ...place,
        ...(input.commandPolicy ? { commandPolicy: input.commandPolicy } : {}),
        timeouts: input.timeouts,
        ...(input.checkpointIgnore ? { checkpointIgnore: input.checkpointIgnore } : {}),
        checkpointOf: () => ({ turn: state.iteration, lastCheckpointId: this.checkpoints.lastId }),
      },
      state.conversation.id,
      this.modelCalls,
    );
  }

  /** This execution's run: a new one, or the one the previous execution carried over (`input.resume`). */
  static start(rawInput: AgentRunInput): Run {
    return new Run(rawInput);
  }

  /**
   * What the next execution is started with: the state's snapshot and the subagents' counter (so a
   * child's id never repeats within the run; `joinTree` above reads it back).
   */
  snapshot(waiting?: { idleDeadline: number }): RunContinuation {
    return Object.assign(this.state.snapshot(waiting), this.tree?.carried(), this.checkpoints.carried());
  }

  /** From run start on, the run's tools, hooks and MCP servers use the workspace's recorded real path. */
  useWorkspace(workspace: string): void {
    this.toolCalls.useWorkspace(workspace);
    this.hooks.useWorkspace(workspace);
    this.mcp.useWorkspace(workspace);
  }

  /**
   * The iteration's `model_call_started`, once: a run whose first activity started it without an
   * answer (steps/start.ts) calls the model again for the same iteration.
   */
  announceCall(): void {
    const iteration = this.state.iteration + 1;
    if (this.announcedCall === iteration) return;
    this.announcedCall = iteration;
    this.emit({ kind: 'model_call_started', iteration });
  }

  /**
   * A request to stop the run: a client's interrupt, or else a hook's request to end it (`stopRun`);
   * undefined: none. The one place both are read (the boundary's first step, a turn's end, a session's wait).
   */
  stopRequested(): { reason?: string } | undefined {
    const { interrupt } = this.state;
    if (interrupt) return interrupt;
    const reason = this.hooks.stopRunRequested;
    return reason === undefined ? undefined : { reason };
  }

  /** Usage and cost of a call; an iteration's call (`judge`) also decides whether compaction is due. */
  account(response: ModelResponse, judge = false): number | null {
    const { model, contextWindow } = this.settings;
    return this.state.account(response, model, contextWindow, judge ? 'judge' : 'ignore');
  }
}
