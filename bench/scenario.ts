import { Context } from '@temporalio/activity';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ScriptedModel, delayed, text, toolUse, type ScriptStep, type ScriptedFunction } from '../src/models/scripted';
import type { ModelRequest } from '../src/shared/messages';
import { createReadFileTool, defineTool, ToolRegistry } from '../src/tools';

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

/** The same tool declared `runsLocally`: ours runs it as a local activity. */
export const LOCAL_OUTPUT_TOOL = 'emit_output_local';

/** A read-only tool with no latency of its own: returns the number of bytes it is asked for. */
export function createOutputTool(name: string = OUTPUT_TOOL, runsLocally = false) {
  return defineTool({
    name,
    description: 'Returns the next chunk of the document, `bytes` characters long.',
    inputSchema: z.strictObject({ bytes: z.number().int().min(1).max(1_000_000) }),
    sideEffect: 'read_only',
    ...(runsLocally ? { runsLocally } : {}),
    async execute({ bytes }, ctx) {
      return outputText(bytes, ctx.toolUseId);
    },
  });
}

/**
 * Which tool the bench agent calls each iteration: the custom `emit_output` (ours runs it as a
 * regular activity, like bash, file edits or any tool without `runsLocally`), the same tool with
 * `runsLocally` (`emit_output_local`), or the built-in `read_file` of a file in the workspace (a
 * read-only built-in: ours runs it as a local activity).
 */
export type BenchTool = typeof OUTPUT_TOOL | typeof LOCAL_OUTPUT_TOOL | 'read_file';

/** The file the `read_file` agent reads: `bytes` characters in lines of 80. */
export function benchDocPath(bytes: number): string {
  return `bench-doc-${bytes}.txt`;
}

/** Writes the file `read_file` runs read, once per size. */
export async function writeBenchDoc(workspace: string, bytes: number): Promise<void> {
  const text = outputText(bytes, benchDocPath(bytes))
    .replace(/\n/g, ' ')
    .replace(/(.{79})/g, '$1\n');
  await fs.writeFile(path.join(workspace, benchDocPath(bytes)), text);
}

export function createBenchRegistry(): ToolRegistry {
  return new ToolRegistry([createOutputTool(), createOutputTool(LOCAL_OUTPUT_TOOL, true), createReadFileTool()]);
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

/** The run's prompt, which tells the model which tool to call and how large each output should be. */
export function benchPrompt(outputBytes: number, tool: BenchTool = OUTPUT_TOOL): string {
  if (tool === 'read_file') return `Read the file ${benchDocPath(outputBytes)} again and again.`;
  const chunks = `Read the document in chunks of ${outputBytes} bytes`;
  return tool === LOCAL_OUTPUT_TOOL ? `${chunks} with ${LOCAL_OUTPUT_TOOL}.` : `${chunks}.`;
}

function promptOf(request: ModelRequest): string {
  const first = request.messages[0];
  return typeof first?.content === 'string' ? first.content : '';
}

/** The tool call the prompt asks for: `read_file` of the named file, or an `emit_output` tool of N bytes. */
function benchToolCall(request: ModelRequest, fallbackBytes: number): { name: string; input: Record<string, unknown> } {
  const prompt = promptOf(request);
  const file = /Read the file (\S+) again/.exec(prompt);
  if (file) return { name: 'read_file', input: { path: file[1] } };
  const name = prompt.includes(`with ${LOCAL_OUTPUT_TOOL}`) ? LOCAL_OUTPUT_TOOL : OUTPUT_TOOL;
  return { name, input: { bytes: outputBytesOf(prompt, fallbackBytes) } };
}

function outputBytesOf(prompt: string, fallback: number): number {
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
    options.clock?.mark(runKey(options.fallbackKey ?? 'in-process'));
    if (request.toolChoice?.type === 'none') return text('Summary: every chunk was read.', { usage: USAGE });
    return toolUse([benchToolCall(request, options.outputBytes ?? 1024)], {
      text: 'Reading the next chunk.',
      usage: USAGE,
    });
  };
  const step: ScriptStep = options.latencyMs ? delayed(options.latencyMs, respond) : respond;
  // No recorded requests: copying and keeping every conversation would be measured as the worker's
  // cost (its CPU and memory), not the orchestration's.
  return new ScriptedModel(new Array<ScriptStep>(options.calls).fill(step), { record: false });
}
