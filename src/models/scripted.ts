/**
 * A model that plays a script, for tests: canned responses, functions of the request, or errors,
 * one step per call. It records every request it receives and fails with a non-retryable
 * `ModelError.ScriptExhausted` when asked for more steps than it has, so a loop that calls the
 * model once too often fails loudly instead of hanging.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ErrorTypes } from '../shared/constants';
import type { ContentBlock, ModelRequest, ModelResponse, StopReason, ToolUseBlock, Usage } from '../shared/messages';
import { cancellationFailure } from './errors';
import type { ModelCallContext, ModelProvider } from './types';

/** A tool_use block whose id the model fills in (`toolu_01`, `toolu_02`, … per model) when omitted. */
export type ScriptedToolUse = Omit<ToolUseBlock, 'id'> & { id?: string };
export type ScriptedBlock = ContentBlock | ScriptedToolUse;

/** A canned response. `stopReason` defaults to `tool_use` when there are tool_use blocks, else `end_turn`. */
export interface ScriptedResponse {
  content: ScriptedBlock[];
  stopReason?: StopReason | null;
  /** Missing counters are 0. */
  usage?: Partial<Usage>;
  id?: string;
  /** Defaults to the request's model. */
  model?: string;
  requestId?: string;
}

/** A step computed from the request; may be slow (use `ctx.signal` to stop early) or throw. */
export type ScriptedFunction = (
  request: ModelRequest,
  ctx: ModelCallContext,
) => ScriptedResponse | Promise<ScriptedResponse>;

/** Throw `error` as-is (an `ApplicationFailure`, an SDK error, anything). */
export interface ScriptedError {
  error: unknown;
}

/** Wait `delayMs` (abortable: the call rejects as cancelled at once) and then play `step`. */
export interface DelayedStep {
  delayMs: number;
  step: ScriptStep;
}

export type ScriptStep = ScriptedResponse | ScriptedFunction | ScriptedError | DelayedStep | Error;

export class ScriptedModel implements ModelProvider {
  readonly name = 'scripted';
  /** Every request received, deep-copied at the moment it arrived. */
  readonly requests: ModelRequest[] = [];
  private readonly steps: ScriptStep[];
  private next = 0;
  private toolUseIds = 0;

  /**
   * `record: false` keeps no copy of the requests (`requests` stays empty) and hands function steps
   * the request itself, which they must not change (it holds the worker's cached conversation): for
   * benchmarks, where copying every conversation would be measured as the worker's cost.
   */
  constructor(
    steps: ScriptStep[],
    private readonly options: { record?: boolean } = {},
  ) {
    this.steps = [...steps];
  }

  /** Steps not yet played. */
  get remaining(): number {
    return this.steps.length - this.next;
  }

  /** Append steps (e.g. from a test that reacts to what it has seen so far). */
  push(...steps: ScriptStep[]): void {
    this.steps.push(...steps);
  }

  async call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse> {
    if (this.options.record !== false) this.requests.push(structuredClone(request));
    const index = this.next;
    const step = this.steps[index];
    if (step === undefined) {
      throw ApplicationFailure.create({
        type: ErrorTypes.ScriptExhausted,
        message: `ScriptedModel script exhausted: call ${index + 1} but only ${this.steps.length} step(s) scripted`,
        nonRetryable: true,
      });
    }
    this.next += 1;
    return this.play(step, request, ctx, index);
  }

  private async play(
    step: ScriptStep,
    request: ModelRequest,
    ctx: ModelCallContext,
    index: number,
  ): Promise<ModelResponse> {
    if (ctx.signal.aborted) throw cancellationFailure(ctx.signal);
    if (step instanceof Error) throw step;
    if (typeof step === 'function') {
      const seen = this.options.record === false ? request : structuredClone(request);
      return this.toResponse(await step(seen, ctx), request, index);
    }
    if ('error' in step) throw step.error;
    if ('delayMs' in step && 'step' in step) {
      await sleep(step.delayMs, ctx);
      return this.play(step.step, request, ctx, index);
    }
    return this.toResponse(step, request, index);
  }

  private toResponse(scripted: ScriptedResponse, request: ModelRequest, index: number): ModelResponse {
    const content = structuredClone(scripted.content).map((block): ContentBlock => {
      if (block.type !== 'tool_use' || typeof block.id === 'string') return block as ContentBlock;
      this.toolUseIds += 1;
      return { ...block, id: `toolu_${String(this.toolUseIds).padStart(2, '0')}` } as ToolUseBlock;
    });
    const response: ModelResponse = {
      id: scripted.id ?? `msg_scripted_${String(index + 1).padStart(2, '0')}`,
      model: scripted.model ?? request.model,
      content,
      stopReason:
        scripted.stopReason !== undefined
          ? scripted.stopReason
          : content.some((b) => b.type === 'tool_use')
            ? 'tool_use'
            : 'end_turn',
      usage: {
        inputTokens: scripted.usage?.inputTokens ?? 0,
        outputTokens: scripted.usage?.outputTokens ?? 0,
        cacheReadInputTokens: scripted.usage?.cacheReadInputTokens ?? 0,
        cacheCreationInputTokens: scripted.usage?.cacheCreationInputTokens ?? 0,
      },
    };
    if (scripted.requestId !== undefined) response.requestId = scripted.requestId;
    return response;
  }
}

// ---- builders -------------------------------------------------------------------------------

/** A final text answer (`end_turn` unless `stopReason` says otherwise). */
export function text(value: string, options: Omit<ScriptedResponse, 'content'> = {}): ScriptedResponse {
  return { content: [{ type: 'text', text: value }], stopReason: 'end_turn', ...options };
}

/** A turn that calls tools (`tool_use`), optionally preceded by some text. Ids are filled in per model when omitted. */
export function toolUse(
  calls: Array<{ name: string; input: unknown; id?: string }>,
  options: Omit<ScriptedResponse, 'content'> & { text?: string } = {},
): ScriptedResponse {
  const { text: preamble, ...rest } = options;
  const blocks: ScriptedBlock[] = calls.map((c) => ({
    type: 'tool_use' as const,
    name: c.name,
    input: c.input,
    ...(c.id !== undefined ? { id: c.id } : {}),
  }));
  return {
    content: preamble !== undefined ? [{ type: 'text', text: preamble }, ...blocks] : blocks,
    stopReason: 'tool_use',
    ...rest,
  };
}

/** A step that throws `error`. */
export function fail(error: unknown): ScriptedError {
  return { error };
}

/** A step that waits `ms` (abortable) before playing `step`. */
export function delayed(ms: number, step: ScriptStep): DelayedStep {
  return { delayMs: ms, step };
}

/** Waits `ms`, heartbeating now and then; rejects with the cancellation as soon as the signal fires. */
function sleep(ms: number, ctx: ModelCallContext): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      clearInterval(beat);
      reject(cancellationFailure(ctx.signal));
    };
    const timer = setTimeout(() => {
      ctx.signal.removeEventListener('abort', onAbort);
      clearInterval(beat);
      resolve();
    }, ms);
    const beat = setInterval(() => ctx.heartbeat(), 1000);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
}
