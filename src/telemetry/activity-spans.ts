import * as otel from '@opentelemetry/api';
import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type {
  CallModelInput,
  CallModelOutput,
  FirstModelCallOutput,
  RunToolInput,
  RunToolOutput,
  SummarizeRunOutput,
} from '../shared/activity-io';
import type { ModelResponse } from '../shared/messages';
import { cutChars } from '../shared/bounds';
import { CACHE_MISS_ERROR_TYPE } from '../shared/conversation';
import { costOf } from '../shared/pricing';
import type { AgentMetrics } from './metrics';
import { ErrorTypes } from '../shared/constants';
import { baseActivityName } from '../shared/activity-names';
import { BUILTIN_TOOL_NAMES, DONE_TOOL_NAME } from '../shared/run/tool-policy';

/** Content attributes (opt-in) are cut to this many characters each. */
export const CONTENT_ATTRIBUTE_CHARS = 32_768;

export interface ActivitySpanSettings {
  tracer: otel.Tracer;
  metrics?: AgentMetrics;
  /** Record prompts, completions, tool arguments and results. */
  content: boolean;
  /**
   * Whether the worker has a tool of this name (its registry). Metrics record the names of tools
   * the run has, every other name as `unknown`: the model may make up any name, and each name would
   * be a metric series that cumulative metrics hold for good. Default: the built-in tools.
   */
  knownTool?: (name: string) => boolean;
}

/** The `gen_ai.tool.name` metrics record for a name the run has no tool for. */
export const UNKNOWN_TOOL_METRIC_NAME = 'unknown';

/**
 * GenAI spans around the agent's activities: `chat <model>` around a model call (`callModel`, and
 * `summarizeRun` for the closing summary and compaction), `execute_tool <name>` around a tool call.
 * Runs inside Temporal's `RunActivity` span, so each span lands in its run's trace. Activities run
 * once per attempt and never replay: a retried call is a new span, as it is a new request.
 */
export class GenAiActivityInterceptor implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: ActivityContext,
    private readonly settings: ActivitySpanSettings,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const type = baseActivityName(this.ctx.info.activityType);
    const arg = input.args[0];
    if ((type === 'callModel' || type === 'firstModelCall' || type === 'summarizeRun') && isObject(arg)) {
      return this.chat(arg as unknown as CallModelInput, type, () => next(input));
    }
    if (type === 'runTool' && isObject(arg)) return this.tool(arg as unknown as RunToolInput, () => next(input));
    return next(input);
  }

  private async chat(input: CallModelInput, type: string, call: () => Promise<unknown>): Promise<unknown> {
    const model = typeof input.model === 'string' ? input.model : 'unknown';
    const common: otel.Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': providerOf(model),
      'gen_ai.request.model': model,
    };
    const attributes: otel.Attributes = {
      ...common,
      ...this.runAttributes(),
      ...(typeof input.maxTokens === 'number' ? { 'gen_ai.request.max_tokens': input.maxTokens } : {}),
      'durable_agent.call': type === 'summarizeRun' ? 'summary' : 'turn',
      // The run's first call also starts it (workspace, system prompt, hooks, MCP): its span and
      // duration include that.
      ...(type === 'firstModelCall' ? { 'durable_agent.run_start': true } : {}),
    };
    if (this.settings.content) {
      if (typeof input.system === 'string') attributes['gen_ai.system_instructions'] = contentText(input.system);
      attributes['gen_ai.input.messages'] = contentText(input.conversation?.delta);
    }
    const started = performance.now();
    let unexported = false;
    return this.settings.tracer.startActiveSpan(
      `chat ${model}`,
      { kind: otel.SpanKind.CLIENT, attributes },
      async (span) => {
        try {
          const output = await call();
          if (type === 'firstModelCall') {
            // Run start and the first call (0.3.0): the worker assembled the system prompt; the model
            // was not called when the workflow had to act first (the span says so, no model metrics).
            const first = output as FirstModelCallOutput | undefined;
            const system = first?.prepared?.context.system;
            if (this.settings.content && typeof system === 'string') {
              span.setAttribute('gen_ai.system_instructions', contentText(system));
            }
            if (!first?.response) {
              span.setAttribute('durable_agent.model_called', false);
              return output;
            }
          }
          const response =
            type === 'summarizeRun'
              ? (output as SummarizeRunOutput | undefined)?.response
              : type === 'firstModelCall'
                ? (output as FirstModelCallOutput).response
                : (output as CallModelOutput);
          const usage = recordResponse(span, response, this.settings.content);
          const waited = response?.rateLimited?.waitMs;
          if (typeof waited === 'number') span.setAttribute(RATE_LIMIT_WAIT_ATTRIBUTE, waited);
          const cost = usage && response ? (costOf(model, response.usage) ?? undefined) : undefined;
          if (cost !== undefined) span.setAttribute('durable_agent.cost_usd', cost);
          this.settings.metrics?.modelCall(common, (performance.now() - started) / 1000, usage, cost);
          return output;
        } catch (err) {
          // A conversation-cache miss (another worker, a restart) never reached the provider: no chat
          // span (a span never ended is never exported) and no model metrics, or dashboards would count
          // a failed LLM call. The workflow resends the conversation in a call that gets its own span.
          if (isObject(err) && err.type === CACHE_MISS_ERROR_TYPE) {
            unexported = true;
            throw err;
          }
          // Told to wait for the key's rate budget (src/admission/): the call never went out. The span
          // says how long it waits; the wait metric counts it; no failed model call is recorded.
          const wait = rateLimitWaitOf(err);
          if (wait) {
            span.setAttributes({ [RATE_LIMIT_WAIT_ATTRIBUTE]: wait.waitMs, 'durable_agent.rate_limited': true });
            this.settings.metrics?.rateLimitWait({ 'gen_ai.provider.name': wait.provider }, wait.waitMs / 1000);
            throw err;
          }
          const errorType = failed(span, err, this.settings.content);
          this.settings.metrics?.modelCall(
            { ...common, 'error.type': errorType },
            (performance.now() - started) / 1000,
          );
          throw err;
        } finally {
          if (!unexported) span.end();
        }
      },
    );
  }

  private async tool(input: RunToolInput, call: () => Promise<unknown>): Promise<unknown> {
    const name = typeof input.name === 'string' ? cutChars(input.name, 128) : UNKNOWN_TOOL_METRIC_NAME;
    // Metric attributes: a name the run has no tool for (a made-up one) is one `unknown` series.
    const known = isObject(input.mcp) || (this.settings.knownTool ?? isBuiltinTool)(name);
    const common: otel.Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': known ? name : UNKNOWN_TOOL_METRIC_NAME,
    };
    const attributes: otel.Attributes = {
      ...common,
      'gen_ai.tool.name': name,
      ...this.runAttributes(),
      'gen_ai.tool.type': 'function',
      ...(typeof input.toolUseId === 'string' ? { 'gen_ai.tool.call.id': input.toolUseId } : {}),
      ...(this.settings.content ? { 'gen_ai.tool.call.arguments': contentText(input.input) } : {}),
    };
    const started = performance.now();
    return this.settings.tracer.startActiveSpan(
      `execute_tool ${name}`,
      { kind: otel.SpanKind.INTERNAL, attributes },
      async (span) => {
        try {
          const output = (await call()) as RunToolOutput;
          const isError = output?.isError === true;
          if (this.settings.content && typeof output?.content === 'string') {
            span.setAttribute('gen_ai.tool.call.result', contentText(output.content));
          }
          if (isError) {
            span.setAttribute('error.type', 'tool_error');
            span.setStatus({ code: otel.SpanStatusCode.ERROR, message: 'the tool result is an error (is_error)' });
          }
          this.settings.metrics?.toolCall(
            isError ? { ...common, 'error.type': 'tool_error' } : common,
            (performance.now() - started) / 1000,
            isError,
          );
          return output;
        } catch (err) {
          const errorType = failed(span, err, this.settings.content);
          this.settings.metrics?.toolCall(
            { ...common, 'error.type': errorType },
            (performance.now() - started) / 1000,
            true,
          );
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }

  private runAttributes(): otel.Attributes {
    const run = this.ctx.info.workflowExecution;
    return {
      ...(run ? { 'gen_ai.conversation.id': run.workflowId } : {}),
      'durable_agent.attempt': this.ctx.info.attempt,
    };
  }
}

/** The span attribute that carries a model call's wait for its key's rate budget, ms. */
export const RATE_LIMIT_WAIT_ATTRIBUTE = 'durable_agent.rate_limit.wait_ms';

/** The wait an attempt was told (`DurableAgent.RateLimited`, details `{ provider, waitMs }`), if it was. */
function rateLimitWaitOf(err: unknown): { provider: string; waitMs: number } | undefined {
  if (!isObject(err) || err.type !== ErrorTypes.AdmissionWait) return undefined;
  const details = (err as { details?: unknown }).details;
  const first: unknown = Array.isArray(details) ? details[0] : undefined;
  if (!isObject(first) || typeof first.waitMs !== 'number' || typeof first.provider !== 'string') return undefined;
  return { provider: first.provider, waitMs: first.waitMs };
}

/** Response attributes; returns the call's token counts (input counts cached tokens too, as the conventions ask). */
function recordResponse(
  span: otel.Span,
  response: ModelResponse | undefined,
  content: boolean,
): { input: number; output: number } | undefined {
  if (!response || !isObject(response.usage)) return undefined;
  const u = response.usage;
  const input = num(u.inputTokens) + num(u.cacheReadInputTokens) + num(u.cacheCreationInputTokens);
  const output = num(u.outputTokens);
  span.setAttributes({
    'gen_ai.response.model': String(response.model),
    'gen_ai.response.id': String(response.id),
    'gen_ai.response.finish_reasons': [response.stopReason ?? 'unknown'],
    'gen_ai.usage.input_tokens': input,
    'gen_ai.usage.output_tokens': output,
    'gen_ai.usage.cache_read.input_tokens': num(u.cacheReadInputTokens),
    'gen_ai.usage.cache_creation.input_tokens': num(u.cacheCreationInputTokens),
  });
  if (content)
    span.setAttribute('gen_ai.output.messages', contentText([{ role: 'assistant', content: response.content }]));
  return { input, output };
}

/**
 * Marks the span failed; returns the `error.type` (the failure's type, e.g. `ModelError.RateLimited`).
 * The error's text (a provider's message can echo the prompt, or a key) is recorded only with the
 * content opt-in; without it the span says the type and the HTTP status, nothing the error said.
 */
function failed(span: otel.Span, err: unknown, content: boolean): string {
  const type =
    isObject(err) && typeof err.type === 'string' && err.type ? err.type : err instanceof Error ? err.name : '_OTHER';
  span.setAttribute('error.type', type);
  const status = httpStatusOf(err);
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (!content) {
    span.setStatus({ code: otel.SpanStatusCode.ERROR, message: type });
    span.addEvent('exception', { 'exception.type': type });
    return type;
  }
  span.setStatus({ code: otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  if (err instanceof Error) span.recordException(err);
  return type;
}

/** The HTTP status a classified model error carries in its details (`ModelErrorDetails.status`). */
function httpStatusOf(err: unknown): number | undefined {
  const details = isObject(err) && Array.isArray(err.details) ? (err.details[0] as unknown) : undefined;
  const status = isObject(details) ? details.status : undefined;
  return typeof status === 'number' && Number.isInteger(status) ? status : undefined;
}

function isBuiltinTool(name: string): boolean {
  return (BUILTIN_TOOL_NAMES as readonly string[]).includes(name) || name === DONE_TOOL_NAME;
}

export function providerOf(model: string): string {
  if (model.startsWith('openai:')) return 'openai';
  if (model.startsWith('claude')) return 'anthropic';
  return 'durable_agent';
}

function contentText(value: unknown): string {
  return cutChars(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), CONTENT_ATTRIBUTE_CHARS);
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}
