/**
 * A payload that no converter could turn into a value: an unknown `encoding`, bytes that are not
 * what the encoding says, a ciphertext the codec cannot open. Outside clients may send any payload
 * (`temporal workflow signal --input-meta encoding=…`), so the worker's payload converter hands the
 * workflow this value instead of failing the workflow task, and every handler rejects or ignores it.
 *
 * Pure: it runs in the workflow sandbox and in the payload converter bundled there. The brand is a
 * registered symbol, which no JSON a client sends can carry.
 */
const UNDECODABLE = Symbol.for('durable-agent.undecodable-payload');

export interface UndecodablePayload {
  readonly [UNDECODABLE]: true;
  /** The payload's `encoding` metadata as sent (shown quoted and cut). */
  readonly encoding: string;
  /** Why it could not be decoded. */
  readonly reason: string;
}

/** Characters of a client-chosen encoding or reason kept in messages. */
const SHOWN_CHARS = 120;

export function undecodablePayload(encoding: string, reason: string): UndecodablePayload {
  return Object.freeze({
    [UNDECODABLE]: true as const,
    encoding: encoding.slice(0, SHOWN_CHARS),
    reason: reason.slice(0, SHOWN_CHARS * 2),
  });
}

export function isUndecodable(value: unknown): value is UndecodablePayload {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[UNDECODABLE] === true;
}

/**
 * `a payload that could not be decoded (encoding "binary/evil": Unknown encoding: binary/evil)`,
 * for rejections and notices. JSON quoting keeps control characters in the encoding visible.
 */
export function describeUndecodable(value: UndecodablePayload): string {
  return `a payload that could not be decoded (encoding ${JSON.stringify(value.encoding)}: ${JSON.stringify(value.reason).slice(1, -1)})`;
}

/** What an outside client should send instead: the encoding every Temporal SDK and the CLI use for JSON. */
export const ACCEPTED_ENCODING_HINT =
  'send it as JSON (payload encoding json/plain, the default of every SDK and the temporal CLI)';
