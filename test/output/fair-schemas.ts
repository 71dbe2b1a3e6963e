/**
 * The review's recursive discriminated union (finding F4): `oneOf` over three tagged object shapes
 * whose `children` are the schema itself. Small (about 440 bytes) and within the run-input bounds,
 * but checking an answer nested a dozen deep with a bad leaf used to take seconds to minutes.
 * `childrenFirst` lists `children` before `kind` in each shape: the validator then walks every
 * branch's children before it sees the tag, so even the first-error pass stays exponential.
 */
export function taggedTreeSchema(childrenFirst = false): Record<string, unknown> {
  const shape = (kind: string) => {
    const kindProp = { kind: { const: kind } };
    const children = { children: { type: 'array', items: { $ref: '#' } } };
    return {
      type: 'object',
      properties: childrenFirst ? { ...children, ...kindProp } : { ...kindProp, ...children },
      required: ['kind', 'children'],
    };
  };
  return { oneOf: ['a', 'b', 'c'].map(shape) };
}

/** A tree `depth` levels deep, tagged `a` all the way down, whose innermost child is `1` (matches no shape). */
export function taggedTreeAnswer(depth: number): string {
  let node: unknown = { kind: 'a', children: [1] };
  for (let i = 0; i < depth; i++) node = { kind: 'a', children: [node] };
  return JSON.stringify(node);
}
