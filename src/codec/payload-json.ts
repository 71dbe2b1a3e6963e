import type { Payload } from '@temporalio/common';

/**
 * Payloads as the remote codec protocol carries them: protobuf JSON, `{metadata: {key: base64}, data:
 * base64}` (what the Web UI and `temporal --codec-endpoint` send and expect back).
 */
export interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Protobuf JSON encodes bytes as base64, standard or URL-safe alphabet. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export class PayloadJsonError extends Error {
  override readonly name = 'PayloadJsonError';
}

function bytes(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) {
    throw new PayloadJsonError(`${where} must be a base64 string`);
  }
  return Buffer.from(value, 'base64');
}

/**
 * `{payloads: [...]}` from a request body, each payload checked; throws a `PayloadJsonError` naming the
 * rule. No `payloads` field (or `null`) is no payloads: protobuf JSON leaves an empty list out, so the
 * `temporal` CLI sends `{}` for a query or signal without input.
 */
export function payloadsFromJson(body: unknown): Payload[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PayloadJsonError('the body must be a JSON object {"payloads": [...]}');
  }
  const unknown = Object.keys(body).filter((k) => k !== 'payloads');
  if (unknown.length) {
    throw new PayloadJsonError(
      `the body must be a JSON object {"payloads": [...]}; unknown field ${JSON.stringify(unknown[0]!.slice(0, 50))}`,
    );
  }
  const list = (body as { payloads?: unknown }).payloads;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    throw new PayloadJsonError('the body must be a JSON object {"payloads": [...]}; "payloads" is not an array');
  }
  return list.map((raw, i) => {
    const where = `payloads[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new PayloadJsonError(`${where} must be an object {"metadata": {...}, "data": "<base64>"}`);
    }
    const { metadata, data } = raw as { metadata?: unknown; data?: unknown };
    const payload: Payload = {};
    if (metadata !== undefined && metadata !== null) {
      if (typeof metadata !== 'object' || Array.isArray(metadata)) {
        throw new PayloadJsonError(`${where}.metadata must be an object of base64 strings`);
      }
      payload.metadata = Object.fromEntries(
        Object.entries(metadata).map(([key, value]) => [key, bytes(value, `${where}.metadata.${key}`)]),
      );
    }
    if (data !== undefined && data !== null) payload.data = bytes(data, `${where}.data`);
    return payload;
  });
}

/** Payloads as protobuf JSON, for a response body. */
export function payloadsToJson(payloads: Payload[]): { payloads: JsonPayload[] } {
  return {
    payloads: payloads.map(({ metadata, data }) => {
      const json: JsonPayload = {};
      if (metadata) {
        json.metadata = Object.fromEntries(
          Object.entries(metadata)
            .filter((entry): entry is [string, Uint8Array] => entry[1] !== null && entry[1] !== undefined)
            .map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
        );
      }
      if (data !== null && data !== undefined) json.data = Buffer.from(data).toString('base64');
      return json;
    }),
  };
}
