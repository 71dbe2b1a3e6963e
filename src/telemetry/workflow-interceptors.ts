/**
 * Workflow interceptors for tracing, bundled into the workflow sandbox only when telemetry is on
 * (`TELEMETRY_WORKFLOW_MODULE`). Not a workflow: no Node built-ins here.
 *
 * Temporal's OpenTelemetry interceptors make the workflow's spans (`RunWorkflow`, `StartActivity`,
 * `ContinueAsNew`, …) and carry the trace to activities, child workflows and the next run after
 * continue-as-new in headers, so a run is one trace. Their ids come from the workflow's seeded
 * `Math.random`, the same on every replay, and spans leave the sandbox through a sink that is not
 * called while replaying: a worker replaying a run recreates its spans with the same ids but emits
 * only the ones that end after the replay.
 *
 * Two changes on top:
 * - `invoke_agent` (GenAI conventions) wraps the run, under `RunWorkflow`.
 * - Queries and update validators get no span. They run on a live worker but never on replay, so a
 *   span there would draw ids from the seeded random stream that a replay does not draw: every later
 *   span id would differ between the live worker and a replaying one, and any later use of the
 *   stream (a `uuid4()` for a child workflow id) would break determinism.
 */
import * as otel from '@opentelemetry/api';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import {
  ContinueAsNew,
  workflowInfo,
  type Next,
  type QueryInput,
  type StartChildWorkflowExecutionInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { TASK_TOOL_NAME } from '../shared/subagents';

/** `gen_ai.agent.name` of a run. */
export const AGENT_NAME = 'durable-agent';

class AgentInboundInterceptor extends OpenTelemetryInboundInterceptor {
  override async execute(
    input: WorkflowExecuteInput,
    next: Next<WorkflowInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    return super.execute(input, (inner) => invokeAgent(this.tracer, inner, next));
  }

  override async handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
    return next(input);
  }

  override validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    next(input);
  }
}

/**
 * A subagent (the `task` tool) runs as a child `agentWorkflow` with the id `<parent id>.task-<n>`,
 * not as a tool activity: its call gets its `execute_tool task` span here, open from the child's
 * start to its end, so the child's trace (`StartChildWorkflow` → its `RunWorkflow` →
 * its `invoke_agent`) hangs under it. Any other child workflow is traced as Temporal's interceptor does.
 */
class AgentOutboundInterceptor extends OpenTelemetryOutboundInterceptor {
  override async startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ): Promise<[Promise<string>, Promise<unknown>]> {
    const parent = workflowInfo().workflowId;
    const childId = input.options.workflowId ?? '';
    const prefix = `${parent}.task-`;
    if (
      input.workflowType !== 'agentWorkflow' ||
      !childId.startsWith(prefix) ||
      !/^\d{1,9}$/.test(childId.slice(prefix.length))
    ) {
      return super.startChildWorkflowExecution(input, next);
    }
    const attributes: otel.Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': TASK_TOOL_NAME,
      'gen_ai.tool.type': 'function',
      'gen_ai.conversation.id': parent,
      'durable_agent.subagent.workflow_id': childId,
      ...taskCallId(input.options.args?.[0]),
    };
    return this.tracer.startActiveSpan(`execute_tool ${TASK_TOOL_NAME}`, { attributes }, async (span) => {
      const failed = (err: unknown) => {
        span.setAttribute('error.type', isObject(err) && typeof err.type === 'string' ? err.type : 'Error');
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
        span.end();
      };
      try {
        const [started, completed] = await super.startChildWorkflowExecution(input, next);
        completed.then(() => span.end(), failed);
        return [started, completed] as [Promise<string>, Promise<unknown>];
      } catch (err) {
        failed(err);
        throw err;
      }
    });
  }
}

async function invokeAgent(
  tracer: otel.Tracer,
  input: WorkflowExecuteInput,
  next: Next<WorkflowInboundCallsInterceptor, 'execute'>,
): Promise<unknown> {
  const info = workflowInfo();
  const arg: unknown = input.args[0];
  const model = isObject(arg) && typeof arg.model === 'string' ? arg.model.slice(0, 200) : undefined;
  const attributes: otel.Attributes = {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': AGENT_NAME,
    'gen_ai.agent.id': info.workflowId,
    'gen_ai.conversation.id': info.workflowId,
    ...(model ? { 'gen_ai.request.model': model } : {}),
    'durable_agent.run_id': info.runId,
    ...(info.continuedFromExecutionRunId ? { 'durable_agent.continued_from': info.continuedFromExecutionRunId } : {}),
  };
  return tracer.startActiveSpan(`invoke_agent ${AGENT_NAME}`, { attributes }, async (span) => {
    try {
      const result = await next(input);
      if (isObject(result)) {
        const usage = isObject(result.usage) ? result.usage : {};
        span.setAttributes({
          'durable_agent.exit_reason': String(result.exitReason),
          'gen_ai.response.model': String(result.model),
          'gen_ai.usage.input_tokens':
            num(usage.inputTokens) + num(usage.cacheReadInputTokens) + num(usage.cacheCreationInputTokens),
          'gen_ai.usage.output_tokens': num(usage.outputTokens),
          ...(typeof result.costUsd === 'number' ? { 'durable_agent.cost_usd': result.costUsd } : {}),
        });
      }
      return result;
    } catch (err) {
      if (err instanceof ContinueAsNew) {
        span.setAttribute('durable_agent.continued_as_new', true);
      } else {
        const type = isObject(err) && typeof err.type === 'string' ? err.type : 'Error';
        span.setAttribute('error.type', type);
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      }
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The parent's `task` call id, which the child's input carries (`subagent.toolUseId`). */
function taskCallId(arg: unknown): otel.Attributes {
  const subagent = isObject(arg) && isObject(arg.subagent) ? arg.subagent : undefined;
  const id = subagent?.toolUseId;
  return typeof id === 'string' && id.length > 0 && id.length <= 256 ? { 'gen_ai.tool.call.id': id } : {};
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new AgentInboundInterceptor()],
  outbound: [new AgentOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
