import type { Attributes, Counter, Histogram, Meter } from '@opentelemetry/api';

/** Metric names: the GenAI semantic conventions' client metrics, and durable-agent's own. */
export const MetricNames = {
  /** Histogram, `{token}`: tokens per model call, `gen_ai.token.type` `input` | `output`. */
  tokenUsage: 'gen_ai.client.token.usage',
  /** Histogram, seconds: model-call latency (`gen_ai.operation.name` `chat`). */
  operationDuration: 'gen_ai.client.operation.duration',
  /** Counter, USD: the priced cost of model calls (models without a known price add nothing). */
  cost: 'durable_agent.model.cost',
  /** Histogram, seconds: tool-call latency, by `gen_ai.tool.name`. */
  toolDuration: 'durable_agent.tool.duration',
  /** Counter: tool calls whose result is an error (`is_error`) or whose activity attempt failed. */
  toolFailures: 'durable_agent.tool.failures',
  /** Histogram, seconds: how long a model call was told to wait for its provider key's rate budget (src/admission/). */
  rateLimitWait: 'durable_agent.model.rate_limit_wait',
} as const;

/** The instruments the activity interceptor records into. */
export class AgentMetrics {
  private readonly tokens: Histogram;
  private readonly duration: Histogram;
  private readonly cost: Counter;
  private readonly toolDuration: Histogram;
  private readonly toolFailures: Counter;
  private readonly rateLimitWaits: Histogram;

  constructor(meter: Meter) {
    this.tokens = meter.createHistogram(MetricNames.tokenUsage, {
      unit: '{token}',
      description: 'Tokens used per model call',
      advice: { explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576] },
    });
    this.duration = meter.createHistogram(MetricNames.operationDuration, {
      unit: 's',
      description: 'Model call duration',
      advice: { explicitBucketBoundaries: [0.01, 0.04, 0.16, 0.64, 2.56, 10.24, 40.96, 81.92, 163.84, 327.68] },
    });
    this.cost = meter.createCounter(MetricNames.cost, { unit: 'USD', description: 'Priced cost of model calls' });
    this.toolDuration = meter.createHistogram(MetricNames.toolDuration, {
      unit: 's',
      description: 'Tool call duration',
      advice: { explicitBucketBoundaries: [0.005, 0.02, 0.08, 0.32, 1.28, 5.12, 20.48, 81.92, 327.68] },
    });
    this.toolFailures = meter.createCounter(MetricNames.toolFailures, {
      unit: '{call}',
      description: 'Tool calls that ended in an error',
    });
    this.rateLimitWaits = meter.createHistogram(MetricNames.rateLimitWait, {
      unit: 's',
      description: "Waits of model calls for their provider key's rate budget",
      advice: { explicitBucketBoundaries: [0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256] },
    });
  }

  rateLimitWait(attrs: Attributes, seconds: number): void {
    this.rateLimitWaits.record(seconds, attrs);
  }

  modelCall(attrs: Attributes, seconds: number, usage?: { input: number; output: number }, costUsd?: number): void {
    this.duration.record(seconds, attrs);
    if (usage) {
      this.tokens.record(usage.input, { ...attrs, 'gen_ai.token.type': 'input' });
      this.tokens.record(usage.output, { ...attrs, 'gen_ai.token.type': 'output' });
    }
    if (costUsd !== undefined && costUsd > 0) this.cost.add(costUsd, attrs);
  }

  toolCall(attrs: Attributes, seconds: number, failed: boolean): void {
    this.toolDuration.record(seconds, attrs);
    if (failed) this.toolFailures.add(1, attrs);
  }
}
