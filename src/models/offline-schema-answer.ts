/**
 * The offline demo's typed answer: when a run asks for JSON valid against an `outputSchema`
 * (`run --output-schema … --json`), the demo model answers with a value built from that schema and
 * what it found. Good enough for the schemas people write by hand or with zod: objects (every
 * property, required or not), arrays, strings (with the standard formats and length bounds), numbers
 * and integers (with their bounds), booleans, `enum`, `const`, `anyOf`/`oneOf` (the first branch),
 * `allOf` (merged) and references inside the schema. Values come from the work done where a
 * property's name says what it wants (`files`, `largest`, `bytes`, `count`, `summary`…), else a
 * placeholder of the right type. The worker checks the answer as it checks any model's.
 */
import type { MeasuredFile } from './offline-output';

/** What the demo found, for the answer's values. */
export interface OfflineFacts {
  /** The answer in prose (what the demo would have said without a schema). */
  summary: string;
  /** Paths it listed. */
  files: string[];
  /** Matching files in all (listed or not). */
  total: number;
  /** Sizes it measured, largest first. */
  sizes: MeasuredFile[];
}

type Schema = Record<string, unknown>;

/** Nesting followed at most; deeper values are the simplest of their type. */
const MAX_DEPTH = 16;
/** Items of a generated array. */
const MAX_ITEMS = 15;

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'demo@example.com',
  'idn-email': 'demo@example.com',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  iri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  duration: 'P1D',
  'json-pointer': '',
  regex: '.*',
};

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value valid against `schema` (as far as the demo can tell), filled with what it found. */
export function answerForSchema(schema: Schema, facts: OfflineFacts): unknown {
  return new Generator(schema, facts).value(schema, '', 0, undefined);
}

class Generator {
  constructor(
    private readonly root: Schema,
    private readonly facts: OfflineFacts,
  ) {}

  /** `key` is the property (or array) the value is for; `file` the measured file an array item stands for. */
  value(raw: unknown, key: string, depth: number, file: MeasuredFile | undefined): unknown {
    if (raw === true || raw === undefined) return this.facts.summary;
    if (!isSchema(raw)) return null;
    const schema = this.flatten(raw);
    if ('const' in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
    const type = this.typeOf(schema);
    if (depth > MAX_DEPTH) return simplest(type);
    switch (type) {
      case 'object':
        return this.object(schema, depth, file);
      case 'array':
        return this.array(schema, key, depth);
      case 'integer':
      case 'number':
        return this.number(schema, key, type, file);
      case 'boolean':
        return this.facts.files.length > 0;
      case 'null':
        return null;
      default:
        return this.string(schema, key, file);
    }
  }

  /** References followed, `allOf` merged, the first branch of `anyOf`/`oneOf` taken. */
  private flatten(schema: Schema): Schema {
    let out: Schema = schema;
    for (let hops = 0; hops < MAX_DEPTH; hops++) {
      const ref = typeof out.$ref === 'string' ? this.resolve(out.$ref) : undefined;
      const branch = [out.anyOf, out.oneOf].find((b): b is unknown[] => Array.isArray(b) && b.length > 0)?.[0];
      const parts = Array.isArray(out.allOf) ? out.allOf.filter(isSchema) : [];
      if (!ref && !isSchema(branch) && parts.length === 0) break;
      const { $ref: _r, anyOf: _a, oneOf: _o, allOf: _l, ...own } = out;
      let merged: Schema = own;
      for (const part of [...(ref ? [ref] : []), ...(isSchema(branch) ? [branch] : []), ...parts]) {
        merged = merge(merged, part);
      }
      out = merged;
    }
    return out;
  }

  private resolve(ref: string): Schema | undefined {
    if (ref === '#') return this.root;
    if (!ref.startsWith('#/')) return undefined;
    let at: unknown = this.root;
    for (const raw of ref.slice(2).split('/')) {
      const key = decodeURIComponentSafe(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      at = isSchema(at) ? at[key] : Array.isArray(at) ? at[Number(key)] : undefined;
    }
    return isSchema(at) ? at : undefined;
  }

  private typeOf(schema: Schema): string {
    const declared = Array.isArray(schema.type)
      ? (schema.type.find((t) => t !== 'null') ?? schema.type[0])
      : schema.type;
    if (typeof declared === 'string') return declared;
    if (isSchema(schema.properties) || Array.isArray(schema.required)) return 'object';
    if ('items' in schema || 'prefixItems' in schema) return 'array';
    if (['minimum', 'maximum', 'multipleOf'].some((k) => k in schema)) return 'number';
    return 'string';
  }

  private object(schema: Schema, depth: number, file: MeasuredFile | undefined): Record<string, unknown> {
    const properties = isSchema(schema.properties) ? schema.properties : {};
    const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : [];
    const out: Record<string, unknown> = {};
    for (const name of new Set([...Object.keys(properties), ...required])) {
      out[name] = this.value(properties[name] ?? {}, name, depth + 1, file);
    }
    return out;
  }

  private array(schema: Schema, key: string, depth: number): unknown[] {
    const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const max = typeof schema.maxItems === 'number' ? schema.maxItems : MAX_ITEMS;
    if (Array.isArray(schema.prefixItems)) {
      return schema.prefixItems.map((item, i) => this.value(item, key, depth + 1, this.facts.sizes[i]));
    }
    const items = schema.items ?? {};
    // A list of files, as paths or as objects: the files found (largest first when measured).
    const files: MeasuredFile[] = this.facts.sizes.length
      ? this.facts.sizes
      : this.facts.files.map((path) => ({ path, bytes: 0 }));
    const count = Math.max(min, Math.min(max, MAX_ITEMS, files.length || 1));
    return Array.from({ length: count }, (_, i) => this.value(items, singular(key), depth + 1, files[i]));
  }

  private number(schema: Schema, key: string, type: string, file: MeasuredFile | undefined): number {
    const largest = this.facts.sizes[0];
    let n = 0;
    if (/byte|size|length|largest|biggest/i.test(key)) n = (file ?? largest)?.bytes ?? 0;
    else if (/count|total|number|num|files|matches|how/i.test(key)) n = this.facts.total;
    const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
    const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
    const step = type === 'integer' ? 1 : 0.5;
    if (typeof schema.exclusiveMinimum === 'number' && n <= schema.exclusiveMinimum) n = schema.exclusiveMinimum + step;
    if (typeof schema.exclusiveMaximum === 'number' && n >= schema.exclusiveMaximum) n = schema.exclusiveMaximum - step;
    if (min !== undefined && n < min) n = min;
    if (max !== undefined && n > max) n = max;
    if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) {
      n = Math.ceil(n / schema.multipleOf) * schema.multipleOf;
    }
    return type === 'integer' ? Math.ceil(n) : n;
  }

  private string(schema: Schema, key: string, file: MeasuredFile | undefined): string {
    const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
    let text: string;
    if (format !== undefined) text = format;
    else if (/path|file|name|largest|biggest/i.test(key))
      text = file?.path ?? this.facts.sizes[0]?.path ?? this.facts.files[0] ?? '';
    else text = this.facts.summary;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
    const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
    if (max !== undefined) text = Array.from(text).slice(0, max).join('');
    while (Array.from(text).length < min) text += '.';
    return text;
  }
}

function simplest(type: string): unknown {
  return type === 'object'
    ? {}
    : type === 'array'
      ? []
      : type === 'string'
        ? ''
        : type === 'boolean'
          ? false
          : type === 'null'
            ? null
            : 0;
}

/** Two schemas' constraints together (properties and `required` united; otherwise the later wins). */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  if (isSchema(a.properties) && isSchema(b.properties)) out.properties = { ...a.properties, ...b.properties };
  if (Array.isArray(a.required) && Array.isArray(b.required)) out.required = [...a.required, ...b.required];
  return out;
}

function singular(key: string): string {
  return key.endsWith('s') ? key.slice(0, -1) : key;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
