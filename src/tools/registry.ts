import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../shared/constants';
import { trySpillText } from './spill';
import type { ToolSpec } from '../shared/messages';
import { truncateTail } from './text';
import { cutPrefix } from '../shared/well-formed';
import { RESERVED_TOOL_NAMES, toolNameProblem } from '../shared/tool-name';
import type { SideEffect, Tool, ToolContext, ToolOutput, ToolResult } from './types';

/** JSON Schema as the Anthropic API wants it for a tool's `input_schema`. */
type JsonSchema = Record<string, unknown>;

/**
 * Convert a tool's zod schema to the JSON Schema the model sees. The API requires an object schema
 * at the top level and does not want the `$schema` dialect marker. `io: 'input'` makes fields with
 * defaults optional, which is what the model may omit.
 */
function toInputSchema(tool: Tool): JsonSchema {
  const json = z.toJSONSchema(tool.inputSchema, { io: 'input' }) as JsonSchema;
  if (json.type !== 'object') {
    throw new Error(`Tool '${tool.name}' must have an object input schema (got ${JSON.stringify(json.type)}).`);
  }
  delete json.$schema;
  return stripSafeIntegerBounds(json) as JsonSchema;
}

/**
 * zod emits `minimum/maximum: ±(2^53-1)` for every `.int()`. They tell the model nothing and cost
 * tokens on every request, so they are dropped.
 */
function stripSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripSafeIntegerBounds);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    out[key] = stripSafeIntegerBounds(value);
  }
  return out;
}

/** `path (string, required), offset (integer), output_mode ("content" | "count")` from a JSON Schema. */
function describeAcceptedFields(schema: JsonSchema): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const fields = Object.entries(properties).map(([name, prop]) => {
    const type = Array.isArray(prop.enum)
      ? prop.enum.map((v) => JSON.stringify(v)).join(' | ')
      : typeof prop.type === 'string'
        ? prop.type
        : 'any';
    return `${name} (${type}${required.has(name) ? ', required' : ''})`;
  });
  return fields.length ? fields.join(', ') : '(none)';
}

/** One `field: problem` line per zod issue; unknown keys are named one by one. */
function formatIssues(error: z.ZodError): string[] {
  const lines: string[] = [];
  for (const issue of error.issues) {
    const where = issue.path.length ? issue.path.map(String).join('.') : '(input)';
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${[...issue.path.map(String), key].join('.')}: not an accepted field`);
    } else {
      lines.push(`${where}: ${issue.message}`);
    }
  }
  return lines;
}

/**
 * The text of anything a tool threw. Total: a thrown value may be a circular object, a BigInt, a
 * Proxy or an object whose getters throw, and describing it must not throw in turn.
 */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) return String(error.message || error.name || 'Error');
    if (typeof error === 'string') return error;
    // An Error from another realm (a vm context, jest's module registry) is not `instanceof Error`.
    if (Object.prototype.toString.call(error) === '[object Error]') {
      const { message } = error as { message?: unknown };
      if (typeof message === 'string' && message) return message;
    }
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      return 'the tool failed with a value that cannot be described';
    }
  }
}

function cancelledResult(name: string, signal: AbortSignal): ToolResult {
  let why = '';
  try {
    const reason: unknown = signal.reason;
    why =
      reason instanceof Error && reason.name !== 'AbortError' && reason.message
        ? ` (${reason.message})`
        : typeof reason === 'string' && reason
          ? ` (${reason})`
          : '';
  } catch {
    // An abort reason whose getters throw still cancels; it just goes unnamed.
  }
  return { content: `Error: Tool '${name}' was cancelled before it finished${why}.`, isError: true };
}

function normalise(output: ToolOutput): ToolResult {
  if (typeof output === 'string') return { content: output, isError: false };
  if (typeof output === 'object' && output !== null && typeof output.content === 'string') {
    return { content: output.content, isError: output.isError === true };
  }
  return { content: 'Error: the tool returned no text output.', isError: true };
}

/** A spill failure's note stays short, so the output keeps most of the cap. */
const MAX_SPILL_NOTE_CHARS = 500;

interface Entry {
  tool: Tool;
  spec: ToolSpec;
}

/**
 * The set of tools a worker offers. It turns every way a tool call can go wrong — unknown tool,
 * malformed or invalid arguments, an exception, cancellation, oversized output — into a
 * {@link ToolResult} the model can read, so a tool failure never becomes an activity failure.
 */
export class ToolRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Add a tool. Its JSON Schema is computed once here, so a bad schema fails at startup, not mid-run. */
  register(tool: Tool): this {
    const problem = toolNameProblem(tool.name);
    if (problem) throw new Error(`Tool refused: ${problem}.`);
    if (this.entries.has(tool.name)) {
      throw new Error(
        `Tool '${tool.name}' is already registered: tool names must be unique, and a custom tool may not take ` +
          `a built-in tool's name. Names taken: ${[...this.names(), ...RESERVED_TOOL_NAMES].join(', ')}.`,
      );
    }
    if (tool.runsLocally && tool.sideEffect !== 'read_only') {
      throw new Error(
        `Tool '${tool.name}' sets runsLocally but is '${tool.sideEffect}': only read-only tools may run as local ` +
          'activities (a local activity is retried without the checks that keep a mutating call from running twice).',
      );
    }
    const spec: ToolSpec = { name: tool.name, description: tool.description, input_schema: toInputSchema(tool) };
    this.entries.set(tool.name, { tool, spec });
    return this;
  }

  get(name: string): Tool | undefined {
    return this.entries.get(name)?.tool;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Registered tool names, in registration order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * Tool definitions for a model request, in the order asked for (every tool that is not opt-in
   * when `names` is omitted). Naming a tool that is not registered is a configuration error and throws.
   */
  specs(names?: readonly string[]): ToolSpec[] {
    const wanted = names ?? this.names().filter((name) => !this.entries.get(name)?.tool.optIn);
    return wanted.map((name) => {
      const entry = this.entries.get(name);
      if (!entry) throw new Error(`Tool '${name}' is not registered. Available tools: ${this.names().join(', ')}.`);
      return entry.spec;
    });
  }

  /**
   * The tools among `names` (every tool that is not opt-in when omitted) that run as local
   * activities; unregistered names are left out.
   */
  localNames(names?: readonly string[]): string[] {
    const wanted = names ?? this.names().filter((name) => !this.entries.get(name)?.tool.optIn);
    return wanted.filter((name) => this.entries.get(name)?.tool.runsLocally === true);
  }

  /** The side-effect class of a tool, or `undefined` when no such tool is registered. */
  sideEffectOf(name: string): SideEffect | undefined {
    return this.entries.get(name)?.tool.sideEffect;
  }

  /**
   * Validate and run one tool call. Never throws: every failure is an `isError` result whose text
   * tells the model what went wrong and how to fix the call. Output is capped at
   * `MAX_TOOL_OUTPUT_CHARS` because it goes to the model and into the workflow's event history.
   */
  async run(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolResult> {
    try {
      const result = await this.runUncapped(name, rawInput, ctx);
      if (result.content.length <= MAX_TOOL_OUTPUT_CHARS) return result;
      // Too long for the model and for history: the model gets the start and the path of the rest.
      const spilled = await trySpillText(ctx.workspace, ctx.toolUseId, result.content);
      const note =
        'path' in spilled
          ? `\n[The full output (${result.content.length} characters) is saved in ${spilled.path}: ` +
            'page through it with read_file (offset/limit) or search it with grep.]'
          : `\n[${cutPrefix(spilled.error, MAX_SPILL_NOTE_CHARS)}]`;
      return {
        content: truncateTail(result.content, MAX_TOOL_OUTPUT_CHARS - note.length) + note,
        isError: result.isError,
      };
    } catch (error) {
      // Only reachable through a bug in the registry itself; still data, never an exception.
      return { content: `Error: ${errorMessage(error)}`, isError: true };
    }
  }

  private async runUncapped(name: string, rawInput: unknown, ctx: ToolContext): Promise<ToolResult> {
    const entry = this.entries.get(name);
    if (!entry) {
      const available = this.names();
      return {
        content: `Error: Tool '${name}' not found. Available tools: ${available.length ? available.join(', ') : '(none)'}.`,
        isError: true,
      };
    }
    const { tool, spec } = entry;

    let input = rawInput;
    // Models sometimes send the arguments as a JSON-encoded string instead of an object.
    if (typeof rawInput === 'string') {
      try {
        input = JSON.parse(rawInput);
      } catch (error) {
        return {
          content:
            `Error: Invalid input for tool '${name}': the arguments are a string that is not valid JSON ` +
            `(${errorMessage(error)}). Send a JSON object with these fields: ${describeAcceptedFields(spec.input_schema)}.`,
          isError: true,
        };
      }
    }

    const parsed = tool.inputSchema.safeParse(input);
    if (!parsed.success) {
      const problems = formatIssues(parsed.error)
        .map((line) => `- ${line}`)
        .join('\n');
      return {
        content:
          `Error: Invalid input for tool '${name}':\n${problems}\n` +
          `Accepted fields: ${describeAcceptedFields(spec.input_schema)}.`,
        isError: true,
      };
    }

    if (ctx.signal.aborted) return cancelledResult(name, ctx.signal);
    // Race the tool against cancellation so an interrupted run gets its answer at once even if a
    // tool is slow to notice; tools that own processes (bash) also listen to the signal and clean up.
    let onAbort: (() => void) | undefined;
    const cancelled = new Promise<ToolResult>((resolve) => {
      onAbort = () => resolve(cancelledResult(name, ctx.signal));
      ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
    const executed = (async (): Promise<ToolResult> => {
      try {
        return normalise(await tool.execute(parsed.data, ctx));
      } catch (error) {
        if (ctx.signal.aborted) return cancelledResult(name, ctx.signal);
        return { content: `Error: ${errorMessage(error)}`, isError: true };
      }
    })();
    try {
      return await Promise.race([executed, cancelled]);
    } finally {
      if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    }
  }
}
