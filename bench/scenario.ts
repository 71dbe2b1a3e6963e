import { Context } from '@temporalio/activity';
import { z } from 'zod';
import { ScriptedModel, delayed, text, toolUse, type ScriptStep, type ScriptedFunction } from '../src/models/scripted';
import type { ModelRequest } from '../src/shared/messages';
import { defineTool, ToolRegistry } from '../src/tools';

/**
 * The agent every subject runs: each iteration the scripted model asks for one call of a
 * zero-latency tool that returns `outputBytes` of text; at the iteration limit the closing summary
 * call (`tool_choice: none`) answers. The model is the same `ScriptedModel` the tests use, so the
 * figures measure orchestration, not a provider.
 */
export const OUTPUT_TOOL = 'emit_output';

/** The model id runs ask for: a priced model, so cost accounting runs as in production. */
export const BENCH_MODEL = 'claude-sonnet-5-5';

/** Small fixed usage: far from any context window, so compaction never triggers and skews a figure. */
const USAGE = { inputTokens: 1_000, outputTokens: 40 };

const FILLER = 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. '.repeat(64);

/** `bytes` characters of text whose first line names the call, so no two outputs are equal. */
export function outputText(bytes: number, label: string): string {
  const head = `output of ${label} (${bytes} bytes)\n`;
  let body = '';
  while (head.length + body.length < bytes) body += FILLER;
  return (head + body).slice(0, bytes);
}

/** A read-only tool with no latency of its own: returns the number of bytes it is asked for. */
export function createOutputTool() {
  return defineTool({
    name: OUTPUT_TOOL,
    description: 'Returns the next chunk of the document, `bytes` characters long.',
    inputSchema: z.strictObject({ bytes: z.number().int().min(1).max(1_000_000) }),
    sideEffect: 'read_only',
    async execute({ bytes }, ctx) {
      return outputText(bytes, ctx.toolUseId);
    },
  });
}

export function createBenchRegistry(): ToolRegistry {
  return new ToolRegistry([createOutputTool()]);
}

/** When each model call of each run arrived, to time iterations from the worker's side. */
export class CallClock {
  private readonly marks = new Map<string, number[]>();

  mark(key: string): void {
    const list = this.marks.get(key);
    const now = performance.now();
    if (list) list.push(now);
    else this.marks.set(key, [now]);
  }

  /** Milliseconds between consecutive model calls of one run: one iteration each. */
  intervals(key: string): number[] {
    const list = this.marks.get(key) ?? [];
    return list.slice(1).map((t, i) => t - (list[i] as number));
  }

  clear(): void {
    this.marks.clear();
  }
}

/** The workflow id of the activity making the call, or `fallback` outside an activity (the in-process loop). */
function runKey(fallback: string): string {
  try {
    return Context.current().info.workflowExecution?.workflowId ?? fallback;
  } catch {
    return fallback;
  }
}

/** The run's prompt, which tells the model how large each tool output should be. */
export function benchPrompt(outputBytes: number): string {
  return `Read the document in chunks of ${outputBytes} bytes.`;
}

function outputBytesOf(request: ModelRequest, fallback: number): number {
  const first = request.messages[0];
  const prompt = typeof first?.content === 'string' ? first.content : '';
  const match = /chunks of (\d+) bytes/.exec(prompt);
  return match ? Number(match[1]) : fallback;
}

export interface BenchModelOptions {
  /** Size of every tool output when the prompt does not say (see `benchPrompt`). */
  outputBytes?: number;
  /** Simulated model latency per call (0: none). */
  latencyMs?: number;
  /** Model calls this model will answer in total (the script's length). */
  calls: number;
  /** Records each call's arrival per run. */
  clock?: CallClock;
  /** Clock key outside an activity. */
  fallbackKey?: string;
}

/** A `ScriptedModel` whose every step is the bench agent's turn (a function of the request). */
export function createBenchModel(options: BenchModelOptions): ScriptedModel {
  const respond: ScriptedFunction = (request) => {
    // The recorded requests are not needed here and would keep every conversation alive: the
    // figures would measure the recorder's memory, not the orchestration.
    model.requests.length = 0;
    options.clock?.mark(runKey(options.fallbackKey ?? 'in-process'));
    if (request.toolChoice?.type === 'none') return text('Summary: every chunk was read.', { usage: USAGE });
    return toolUse([{ name: OUTPUT_TOOL, input: { bytes: outputBytesOf(request, options.outputBytes ?? 1024) } }], {
      text: 'Reading the next chunk.',
      usage: USAGE,
    });
  };
  const step: ScriptStep = options.latencyMs ? delayed(options.latencyMs, respond) : respond;
  const model: ScriptedModel = new ScriptedModel(new Array<ScriptStep>(options.calls).fill(step));
  return model;
}
