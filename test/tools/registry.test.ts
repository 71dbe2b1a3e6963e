import { runInNewContext } from 'node:vm';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { MAX_TOOL_OUTPUT_CHARS } from '../../src/shared/constants';
import { BUILTIN_SIDE_EFFECTS, BUILTIN_TOOL_NAMES, DONE_TOOL_NAME } from '../../src/shared/run/tool-policy';
import { createDefaultRegistry, defineTool, ToolRegistry } from '../../src/tools';
import { makeContext, makeTempDir } from './helpers';

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  inputSchema: z.strictObject({
    text: z.string().describe('Text to echo.'),
    times: z.number().int().min(1).max(5).optional().describe('Repeat count.'),
  }),
  sideEffect: 'read_only',
  async execute(input) {
    return input.text.repeat(input.times ?? 1);
  },
});

const boom = defineTool({
  name: 'boom',
  description: 'Always throws.',
  inputSchema: z.object({}),
  sideEffect: 'mutating',
  async execute() {
    throw new Error('disk on fire');
  },
});

const throwsString = defineTool({
  name: 'throws_string',
  description: 'Throws a non-Error value.',
  inputSchema: z.object({}),
  sideEffect: 'read_only',
  async execute() {
    throw 'plain string failure';
  },
});

/** Never settles by itself: only cancellation can end it. */
const hang = defineTool({
  name: 'hang',
  description: 'Waits for ever.',
  inputSchema: z.object({}),
  sideEffect: 'read_only',
  execute: () => new Promise<string>(() => {}),
});

const big = defineTool({
  name: 'big',
  description: 'Returns a lot of text.',
  inputSchema: z.object({ n: z.number().int() }),
  sideEffect: 'read_only',
  async execute(input) {
    return { content: 'x'.repeat(input.n), isError: false };
  },
});

const failing = defineTool({
  name: 'failing',
  description: 'Returns an error result.',
  inputSchema: z.object({}),
  sideEffect: 'read_only',
  async execute() {
    return { content: 'it did not work', isError: true };
  },
});

describe('ToolRegistry', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const registry = new ToolRegistry([echo, boom, throwsString, hang, big, failing]);
  const ctx = () => makeContext(dir);

  test('runs a tool with valid object input', async () => {
    await expect(registry.run('echo', { text: 'hi', times: 2 }, ctx())).resolves.toEqual({
      content: 'hihi',
      isError: false,
    });
  });

  test('a tool returning isError keeps the flag', async () => {
    await expect(registry.run('failing', {}, ctx())).resolves.toEqual({ content: 'it did not work', isError: true });
  });

  test('unknown tool is an error result listing the available tools', async () => {
    const result = await registry.run('nope', {}, ctx());
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      "Error: Tool 'nope' not found. Available tools: echo, boom, throws_string, hang, big, failing.",
    );
  });

  test('input sent as a JSON string is parsed', async () => {
    const result = await registry.run('echo', '{"text":"from json"}', ctx());
    expect(result).toEqual({ content: 'from json', isError: false });
  });

  test('input that is a string of invalid JSON is an error naming the tool and the accepted fields', async () => {
    const result = await registry.run('echo', '{"text": "unterminated', ctx());
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Error: Invalid input for tool 'echo': the arguments are a string that is not valid JSON/,
    );
    expect(result.content).toContain('text (string, required)');
  });

  test('schema failure names each bad field and what is accepted', async () => {
    const result = await registry.run('echo', { text: 42, times: 9 }, ctx());
    expect(result.isError).toBe(true);
    expect(result.content).toContain("Error: Invalid input for tool 'echo':");
    expect(result.content).toContain('- text: Invalid input: expected string, received number');
    expect(result.content).toMatch(/- times: Too big: expected number to be <=5/);
    expect(result.content).toContain('Accepted fields: text (string, required), times (integer).');
  });

  test('a missing required field is named', async () => {
    const result = await registry.run('echo', {}, ctx());
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- text: Invalid input: expected string, received undefined');
  });

  test('an unknown field is named rather than silently ignored', async () => {
    const result = await registry.run('echo', { text: 'a', txet: 'b' }, ctx());
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- txet: not an accepted field');
  });

  test('non-object input is reported at the top level', async () => {
    const result = await registry.run('echo', null, ctx());
    expect(result.isError).toBe(true);
    expect(result.content).toContain('- (input): Invalid input: expected object, received null');
  });

  test('a thrown exception becomes "Error: <message>"', async () => {
    await expect(registry.run('boom', {}, ctx())).resolves.toEqual({ content: 'Error: disk on fire', isError: true });
  });

  test('a thrown non-Error value becomes an error result too', async () => {
    await expect(registry.run('throws_string', {}, ctx())).resolves.toEqual({
      content: 'Error: plain string failure',
      isError: true,
    });
  });

  test('cancellation while a tool runs returns a cancelled error result promptly', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = registry.run('hang', {}, makeContext(dir, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(10_000); // the tool hangs until aborted
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Error: Tool 'hang' was cancelled/);
  });

  test('an already-aborted signal does not run the tool', async () => {
    const controller = new AbortController();
    controller.abort(new Error('run interrupted'));
    const result = await registry.run('boom', {}, makeContext(dir, { signal: controller.signal }));
    expect(result.isError).toBe(true);
    expect(result.content).toBe("Error: Tool 'boom' was cancelled before it finished (run interrupted).");
  });

  test('output longer than MAX_TOOL_OUTPUT_CHARS is capped with a note saying how much was cut and where the rest is', async () => {
    const n = MAX_TOOL_OUTPUT_CHARS + 5000;
    const result = await registry.run('big', { n }, ctx());
    expect(result.isError).toBe(false);
    expect(result.content.length).toBeLessThanOrEqual(MAX_TOOL_OUTPUT_CHARS);
    const match = /\[Output truncated: (\d+) of (\d+) characters omitted\.\]/.exec(result.content);
    expect(match).not.toBeNull();
    expect(Number(match?.[2])).toBe(n);
    const kept = result.content.indexOf('\n\n[Output truncated');
    expect(kept + Number(match?.[1])).toBe(n);
    const spill = /saved in (\S+): page through it/.exec(result.content)?.[1];
    expect(spill).toBe('.durable-agent/spill/t1.txt');
    expect(readFileSync(path.join(dir, spill ?? ''), 'utf8')).toBe('x'.repeat(n));
  });

  test('output at exactly the cap is left alone', async () => {
    const result = await registry.run('big', { n: MAX_TOOL_OUTPUT_CHARS }, ctx());
    expect(result.content).toBe('x'.repeat(MAX_TOOL_OUTPUT_CHARS));
  });

  test('names(), get() and sideEffectOf()', () => {
    expect(registry.names()).toEqual(['echo', 'boom', 'throws_string', 'hang', 'big', 'failing']);
    expect(registry.get('echo')).toBe(echo);
    expect(registry.get('nope')).toBeUndefined();
    expect(registry.sideEffectOf('echo')).toBe('read_only');
    expect(registry.sideEffectOf('boom')).toBe('mutating');
    expect(registry.sideEffectOf('nope')).toBeUndefined();
  });

  test('registering a name twice throws', () => {
    expect(() => new ToolRegistry([echo, echo])).toThrow(
      "Tool 'echo' is already registered: tool names must be unique",
    );
  });

  test('a tool whose schema is not an object is refused at registration', () => {
    const bad = defineTool({
      name: 'bad',
      description: 'x',
      inputSchema: z.string(),
      sideEffect: 'read_only',
      execute: async (s) => s,
    });
    expect(() => new ToolRegistry([bad])).toThrow(/object input schema/);
  });

  test('specs() are valid Anthropic tool definitions, cached, in the order asked', () => {
    const [spec] = registry.specs(['echo']);
    expect(spec).toEqual({
      name: 'echo',
      description: 'Echo the text back.',
      input_schema: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'Text to echo.' },
          times: { type: 'integer', minimum: 1, maximum: 5, description: 'Repeat count.' },
        },
        required: ['text'],
        additionalProperties: false,
      },
    });
    expect(registry.specs(['echo'])[0]).toBe(spec);
    expect(registry.specs(['big', 'echo']).map((s) => s.name)).toEqual(['big', 'echo']);
    expect(registry.specs().map((s) => s.name)).toEqual(registry.names());
  });

  test('specs() for an unregistered name throws, naming the available tools', () => {
    expect(() => registry.specs(['echo', 'missing'])).toThrow(
      "Tool 'missing' is not registered. Available tools: echo, boom, throws_string, hang, big, failing.",
    );
  });
});

describe('no exception in any tool path escapes registry.run', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const circular: Record<string, unknown> = { name: 'loop' };
  circular.self = circular;
  const getterThrows = new Error('x');
  Object.defineProperty(getterThrows, 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  const hostile = new Proxy(
    {},
    {
      get() {
        throw new Error('trap');
      },
      getPrototypeOf() {
        throw new Error('trap');
      },
    },
  );
  // Describing it throws a value whose description throws in turn.
  const nested = new Error('x');
  Object.defineProperty(nested, 'message', {
    get() {
      throw hostile;
    },
  });
  const thrown: Record<string, unknown> = {
    undefined: undefined,
    null: null,
    circular,
    bigint: { n: BigInt(1) },
    'a throwing message getter': getterThrows,
    'a hostile Proxy': hostile,
    'an Error whose message getter throws a hostile Proxy': nested,
  };
  const tools = Object.entries(thrown).map(([label, value], i) =>
    defineTool({
      name: `throws_${i}`,
      description: `Throws ${label}.`,
      inputSchema: z.object({}),
      sideEffect: 'read_only',
      async execute() {
        throw value;
      },
    }),
  );
  const badOutput = defineTool({
    name: 'bad_output',
    description: 'Returns an object whose content getter throws.',
    inputSchema: z.object({}),
    sideEffect: 'read_only',
    async execute() {
      return {
        get content(): string {
          throw new Error('content getter');
        },
      };
    },
  });
  const registry = new ToolRegistry([...tools, badOutput]);

  Object.keys(thrown).forEach((label, i) => {
    test(`a tool throwing ${label} gives an is_error result`, async () => {
      const result = await registry.run(`throws_${i}`, {}, makeContext(dir));
      expect(result.isError).toBe(true);
      expect(result.content).toMatch(/^Error: ./);
    });
  });

  test('an Error from another realm (as Node modules throw under jest) keeps its message', async () => {
    const foreign = defineTool({
      name: 'foreign',
      description: 'Throws an Error made in another realm.',
      inputSchema: z.object({}),
      sideEffect: 'read_only',
      async execute() {
        throw runInNewContext('new Error("made elsewhere")');
      },
    });
    await expect(new ToolRegistry([foreign]).run('foreign', {}, makeContext(dir))).resolves.toEqual({
      content: 'Error: made elsewhere',
      isError: true,
    });
  });

  test('an output whose content getter throws gives an is_error result', async () => {
    await expect(registry.run('bad_output', {}, makeContext(dir))).resolves.toEqual({
      content: 'Error: content getter',
      isError: true,
    });
  });

  test('an abort reason whose getters throw still gives a cancelled result', async () => {
    const controller = new AbortController();
    controller.abort(hostile);
    await expect(registry.run('throws_0', {}, makeContext(dir, { signal: controller.signal }))).resolves.toEqual({
      content: "Error: Tool 'throws_0' was cancelled before it finished.",
      isError: true,
    });
  });
});

describe('createDefaultRegistry', () => {
  const registry = createDefaultRegistry();

  test('provides exactly the built-in tool names plus the opt-in done tool', () => {
    expect(registry.names()).toEqual([...BUILTIN_TOOL_NAMES, DONE_TOOL_NAME]);
  });

  test('the done tool is offered only when named', () => {
    expect(registry.specs().map((s) => s.name)).toEqual([...BUILTIN_TOOL_NAMES]);
    expect(registry.specs([DONE_TOOL_NAME]).map((s) => s.name)).toEqual([DONE_TOOL_NAME]);
  });

  test('side-effect classes match what the workflow assumes for approvals', () => {
    expect(Object.fromEntries(registry.names().map((n) => [n, registry.sideEffectOf(n)]))).toEqual({
      bash: 'mutating',
      read_file: 'read_only',
      write_file: 'mutating',
      edit_file: 'mutating',
      glob: 'read_only',
      grep: 'read_only',
      done: 'read_only',
    });
    for (const name of BUILTIN_TOOL_NAMES) expect(registry.sideEffectOf(name)).toBe(BUILTIN_SIDE_EFFECTS[name]);
  });

  test('read_file, glob and grep run locally; only tools among those offered are reported', () => {
    expect(registry.localNames()).toEqual(['read_file', 'glob', 'grep']);
    expect(registry.localNames(['bash', 'grep', 'nope'])).toEqual(['grep']);
    expect(registry.localNames([])).toEqual([]);
  });

  test('runsLocally on a mutating tool is refused at registration, saying why', () => {
    const mutating = defineTool({
      name: 'deploy',
      description: 'Deploys.',
      inputSchema: z.object({}),
      sideEffect: 'mutating',
      runsLocally: true,
      execute: async () => 'deployed',
    });
    expect(() => new ToolRegistry([mutating])).toThrow(
      /Tool 'deploy' sets runsLocally but is 'mutating': only read-only tools may run as local activities/,
    );
  });

  test.each([...BUILTIN_TOOL_NAMES])('%s has an object input schema without $schema, with described fields', (name) => {
    const [spec] = registry.specs([name]);
    const schema = spec?.input_schema ?? {};
    expect(schema.type).toBe('object');
    expect(schema).not.toHaveProperty('$schema');
    expect(JSON.stringify(schema)).not.toContain(String(Number.MAX_SAFE_INTEGER));
    expect(spec?.description.length).toBeGreaterThan(40);
    const properties = schema.properties as Record<string, { description?: string }>;
    expect(Object.keys(properties).length).toBeGreaterThan(0);
    for (const [field, prop] of Object.entries(properties)) {
      expect([field, typeof prop.description]).toEqual([field, 'string']);
    }
    // The schema must survive a JSON round trip unchanged: it crosses activity boundaries as JSON.
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });

  test('optional fields with defaults are not required in the JSON Schema', () => {
    const schema = registry.specs(['read_file'])[0]?.input_schema as { required: string[] };
    expect(schema.required).toEqual(['path']);
    const grep = registry.specs(['grep'])[0]?.input_schema as { required: string[] };
    expect(grep.required).toEqual(['pattern']);
  });
});
