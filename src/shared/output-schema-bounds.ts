/**
 * Bounds on a run's `outputSchema` beyond its size: how deep it nests and how large it becomes when
 * every `$ref` is expanded in place. Pure code (the workflow checks the run input with it, and so do
 * the client and the CLI): no Node built-ins.
 *
 * Why: validation cost follows the expanded schema, not its text. A 2 KB schema whose 24 levels of
 * `$defs` each say `{"anyOf": [{"$ref": next}, {"$ref": next}]}` is 2^24 subschemas once expanded;
 * checking any answer that fails it (`"1"`) made the validator visit all of them and collect an
 * error at each, until V8's heap was gone and the worker process with it.
 *
 * The expansion is counted as the validator would walk it: every object and array of the schema
 * counts one, and a `$ref` (`$dynamicRef`, `$recursiveRef`) counts the expansion of what it points
 * to. A reference back into a schema being expanded (recursion, as in a tree type) counts one: its
 * cost depends on the answer's depth, which the validator's own time and memory bounds cover
 * (src/activities/output-check-pool.ts). Each subschema is expanded once and remembered, so this
 * check is linear in the schema.
 *
 * Only references inside the schema are accepted (`#`, `#/json/pointer`, `#anchor`): a remote one is
 * never fetched, and an `$id`-relative one could not be resolved here exactly. Where resolution is
 * ambiguous (nested `$id`s, anchors of the same name), every candidate is counted: the count is
 * never below what the validator walks.
 */

/** Nesting depth of the schema's JSON (objects and arrays). zod's schemas of ten nested objects use about 25. */
export const MAX_OUTPUT_SCHEMA_DEPTH = 64;
/**
 * Subschemas once every `$ref` is expanded. A 16 KiB schema without references has at most a few
 * thousand; 20,000 leaves room for definitions used many times, and keeps one check of an answer
 * that fails everywhere at a few tens of milliseconds.
 */
export const MAX_OUTPUT_SCHEMA_EXPANSION = 20_000;

type Json = Record<string, unknown> | unknown[];

const REF_KEYS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;

function isContainer(value: unknown): value is Json {
  return typeof value === 'object' && value !== null;
}

/** One problem with the schema's nesting or expansion, or undefined when it is within the bounds. */
export function outputSchemaBoundsProblem(schema: Record<string, unknown>): string | undefined {
  const index = indexSchema(schema);
  if (typeof index === 'string') return index;
  return new Expansion(index).problem(schema);
}

interface SchemaIndex {
  /** Objects with a non-fragment `$id` (resource roots), plus the document root. */
  resources: Set<Json>;
  /** Parent of every container, to find the resource roots above a reference. */
  parents: Map<Json, Json | undefined>;
  /** `$anchor`, `$dynamicAnchor` and draft-07 `"$id": "#name"`, by name: every object that declares it. */
  anchors: Map<string, Json[]>;
}

/** Walks the schema once (iteratively: its depth is what is being checked), bounding depth. */
function indexSchema(root: Record<string, unknown>): SchemaIndex | string {
  const index: SchemaIndex = { resources: new Set([root]), parents: new Map(), anchors: new Map() };
  const stack: Array<{ node: Json; parent: Json | undefined; depth: number }> = [
    { node: root, parent: undefined, depth: 1 },
  ];
  while (stack.length > 0) {
    const { node, parent, depth } = stack.pop()!;
    if (depth > MAX_OUTPUT_SCHEMA_DEPTH) {
      return `outputSchema nests deeper than ${MAX_OUTPUT_SCHEMA_DEPTH} levels of objects and arrays`;
    }
    if (index.parents.has(node)) continue; // not reachable from JSON, but never loop
    index.parents.set(node, parent);
    if (!Array.isArray(node)) {
      const id = node.$id;
      if (typeof id === 'string') {
        if (id.startsWith('#')) addAnchor(index, id.slice(1), node);
        else index.resources.add(node);
      }
      for (const key of ['$anchor', '$dynamicAnchor']) {
        if (typeof node[key] === 'string') addAnchor(index, node[key], node);
      }
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (isContainer(child)) stack.push({ node: child, parent: node, depth: depth + 1 });
    }
  }
  return index;
}

function addAnchor(index: SchemaIndex, name: string, node: Json): void {
  const list = index.anchors.get(name) ?? [];
  list.push(node);
  index.anchors.set(name, list);
}

class Expansion {
  private readonly done = new Map<Json, number>();
  private readonly open = new Set<Json>();
  private refused: string | undefined;

  constructor(private readonly index: SchemaIndex) {}

  problem(root: Json): string | undefined {
    const total = this.weight(root);
    if (this.refused) return this.refused;
    if (total > MAX_OUTPUT_SCHEMA_EXPANSION) {
      return (
        `outputSchema expands to more than ${MAX_OUTPUT_SCHEMA_EXPANSION} subschemas once its $refs are ` +
        'expanded (references that branch into references, level after level, grow exponentially); ' +
        'define each shape once and reference it without repeated branching'
      );
    }
    return undefined;
  }

  /**
   * Subschemas `node` stands for with its references expanded, saturating just above the bound.
   * Recursive, but only as deep as the schema's nesting plus its chain of references; the nesting is
   * bounded already, and a chain is cut as soon as the count passes the bound.
   */
  private weight(node: Json): number {
    const known = this.done.get(node);
    if (known !== undefined) return known;
    if (this.open.has(node) || this.refused) return 1;
    this.open.add(node);
    let total = 1;
    const add = (n: number) => (total = Math.min(total + n, MAX_OUTPUT_SCHEMA_EXPANSION + 1));
    if (!Array.isArray(node)) {
      for (const key of REF_KEYS) {
        const ref = node[key];
        if (typeof ref !== 'string') continue;
        const targets = this.resolve(ref, node);
        if (typeof targets === 'string') {
          this.refused ??= targets;
          break;
        }
        for (const target of targets) {
          if (total > MAX_OUTPUT_SCHEMA_EXPANSION) break;
          add(this.weight(target));
        }
      }
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (total > MAX_OUTPUT_SCHEMA_EXPANSION || this.refused) break;
      if (isContainer(child)) add(this.weight(child));
    }
    this.open.delete(node);
    this.done.set(node, total);
    return total;
  }

  /** Every schema `ref` (written in `from`) may point to, or why it is refused. */
  private resolve(ref: string, from: Json): Json[] | string {
    const shown = ref.length > 80 ? `${ref.slice(0, 80)}…` : ref;
    if (!ref.startsWith('#')) {
      return (
        `outputSchema: $ref '${shown}' points outside the schema; only references within it are ` +
        "accepted, such as '#/$defs/name' or '#anchor' (remote schemas are never fetched)"
      );
    }
    const fragment = ref.slice(1);
    if (fragment !== '' && !fragment.startsWith('/')) {
      let name: string;
      try {
        name = decodeURIComponent(fragment);
      } catch {
        return `outputSchema: $ref '${shown}' is not a valid URI fragment`;
      }
      const anchored = this.index.anchors.get(name) ?? [];
      if (anchored.length === 0) return `outputSchema: $ref '${shown}' names no $anchor of the schema`;
      return anchored;
    }
    const targets: Json[] = [];
    for (const base of this.basesAbove(from)) {
      const target = followPointer(base, fragment);
      if (target === 'bad') return `outputSchema: $ref '${shown}' is not a valid JSON pointer`;
      if (target !== undefined) targets.push(target);
    }
    if (targets.length === 0) return `outputSchema: $ref '${shown}' points to nothing in the schema`;
    return targets;
  }

  /** The resource roots a fragment reference in `node` may be resolved against: every one above it. */
  private basesAbove(node: Json): Json[] {
    const bases: Json[] = [];
    for (let at: Json | undefined = node; at !== undefined; at = this.index.parents.get(at)) {
      if (this.index.resources.has(at)) bases.push(at);
    }
    return bases;
  }
}

/** The container a JSON pointer (`/a/0/b`, percent-decoded) names under `base`; `'bad'` when malformed. */
function followPointer(base: Json, pointer: string): Json | undefined | 'bad' {
  if (pointer === '') return base;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pointer);
  } catch {
    return 'bad';
  }
  let at: unknown = base;
  for (const raw of decoded.slice(1).split('/')) {
    if (/~[^01]|~$/.test(raw)) return 'bad';
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isContainer(at)) return undefined;
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
      at = at[Number(key)];
    } else {
      at = Object.prototype.hasOwnProperty.call(at, key) ? at[key] : undefined;
    }
  }
  return isContainer(at) ? at : undefined;
}
