/** A request the inspector refuses (HTTP 400): the message says what it accepts. */
export class BadRequest extends Error {
  override readonly name = 'BadRequest';
}

/** An action the page may not take: the inspector runs `--read-only` (HTTP 403). */
export class ReadOnly extends Error {
  override readonly name = 'ReadOnly';
}
