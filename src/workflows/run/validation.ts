/** Helpers for update validators: inputs from outside clients are any JSON value. */

/** `null`, `an array`, `an object`, `a string`…: what a client sent, for the rejection message. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * The argument as an object with only the `allowed` keys, or an Error saying what is accepted
 * (`accepted`, e.g. `{"message": string}`) and what was wrong.
 */
export function objectWithKeys(raw: unknown, allowed: readonly string[], accepted: string): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error(`expected an object ${accepted}, got ${describe(raw)}`);
  }
  const unknownKeys = Object.keys(raw).filter((k) => !allowed.includes(k));
  if (unknownKeys.length) {
    const named = unknownKeys.slice(0, 5).map((k) => `'${k.slice(0, 50)}'`);
    throw new Error(`unknown field(s) ${named.join(', ')}; accepted: ${accepted}`);
  }
  return raw as Record<string, unknown>;
}
