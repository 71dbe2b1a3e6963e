/**
 * The debug switch (`DURABLE_AGENT_DEBUG=1`; `durable-agent … --debug` sets it): one line on the
 * worker's stderr per model call and per tool call, with the request's and the answer's sizes, the
 * time taken and what the model decided, as a hand-written agent loop prints per iteration. Lines
 * say sizes, names and ids, never the text of a prompt, an answer or a tool's output.
 */
import { Context } from '@temporalio/activity';
import type { ModelProvider, ModelResolver } from '../models/types';
import type { RunToolInput, RunToolOutput } from '../shared/activity-io';
import type { ModelRequest, ModelResponse } from '../shared/messages';
import { utf8Length } from '../shared/bounds';

/** The variable that turns the debug lines on (`1`, `true`, `yes` or `on`). */
export const DEBUG_ENV = 'DURABLE_AGENT_DEBUG';

/** Every debug line starts with this. */
export const DEBUG_PREFIX = '[durable-agent debug]';

/** Whether the debug lines are on in this environment. */
export function debugEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes|on)$/i.test(env[DEBUG_ENV]?.trim() ?? '');
}

/** Where the lines go: the process's stderr, one write per line. */
export type DebugWrite = (line: string) => void;
const toStderr: DebugWrite = (line) => {
  process.stderr.write(`${line}\n`);
};

/** The resolver's providers, each call logged (one line when it ends, answered or failed). */
export function debugModels(models: ModelResolver, write: DebugWrite = toStderr): ModelResolver {
  const wrapped = new WeakMap<ModelProvider, ModelProvider>();
  return (model) => {
    const provider = models(model);
    let logged = wrapped.get(provider);
    if (!logged) {
      logged = {
        name: provider.name,
        call: async (request, ctx) => {
          const started = performance.now();
          const sent = describeRequest(request);
          try {
            const response = await provider.call(request, ctx);
            write(`${DEBUG_PREFIX} model call ${where()} ${sent} | ${describeResponse(response)} | ${ms(started)}`);
            return response;
          } catch (err) {
            write(`${DEBUG_PREFIX} model call ${where()} ${sent} | failed: ${errorType(err)} | ${ms(started)}`);
            throw err;
          }
        },
      };
      wrapped.set(provider, logged);
    }
    return logged;
  };
}

/** The `runTool` activity, each call logged when it ends. */
export function debugRunTool(
  runTool: (input: RunToolInput) => Promise<RunToolOutput>,
  write: DebugWrite = toStderr,
): (input: RunToolInput) => Promise<RunToolOutput> {
  return async (input) => {
    const started = performance.now();
    const asked =
      `${String(input.name).slice(0, 80)} id=${String(input.toolUseId).slice(0, 80)} ` +
      `input ${jsonBytes(input.input)} bytes`;
    try {
      const output = await runTool(input);
      const outcome = output.isError ? 'is_error' : 'ok';
      write(
        `${DEBUG_PREFIX} tool call ${where()} ${asked} | ${outcome}, ${output.content.length} chars | ${ms(started)}`,
      );
      return output;
    } catch (err) {
      write(`${DEBUG_PREFIX} tool call ${where()} ${asked} | failed: ${errorType(err)} | ${ms(started)}`);
      throw err;
    }
  };
}

function describeRequest(request: ModelRequest): string {
  return (
    `model=${request.model} request: ${request.messages.length} messages, ${jsonBytes(request)} bytes, ` +
    `${request.tools.length} tools${request.toolChoice ? `, tool_choice ${request.toolChoice.type}` : ''}`
  );
}

function describeResponse(response: ModelResponse): string {
  const calls = response.content
    .filter((b) => b.type === 'tool_use')
    .map((b) => String((b as { name?: unknown }).name).slice(0, 80));
  const decision =
    calls.length > 0
      ? `calls ${calls.length} tool${calls.length === 1 ? '' : 's'}: ${calls.join(', ')}`
      : response.stopReason === 'end_turn' || response.stopReason === 'stop_sequence'
        ? 'answers'
        : `stops (${response.stopReason ?? 'no stop reason'})`;
  const u = response.usage;
  const input = u.inputTokens + (u.cacheReadInputTokens ?? 0) + (u.cacheCreationInputTokens ?? 0);
  return (
    `response: ${response.stopReason ?? 'null'}, ${response.content.length} blocks, ${jsonBytes(response.content)} bytes, ` +
    `${input} in (${u.cacheReadInputTokens ?? 0} cached) / ${u.outputTokens} out tokens → ${decision}`
  );
}

/** The run and attempt the current activity works for. */
function where(): string {
  try {
    const info = Context.current().info;
    return `run=${info.workflowExecution?.workflowId ?? '?'} attempt=${info.attempt}`;
  } catch {
    return 'run=?';
  }
}

function ms(started: number): string {
  return `${Math.round(performance.now() - started)} ms`;
}

function jsonBytes(value: unknown): number {
  try {
    return utf8Length(JSON.stringify(value) ?? '');
  } catch {
    return 0;
  }
}

function errorType(err: unknown): string {
  const e = err as { type?: unknown; name?: unknown } | null;
  return typeof e?.type === 'string' ? e.type : typeof e?.name === 'string' ? e.name : 'error';
}
