import {
  DefaultPayloadConverter,
  METADATA_ENCODING_KEY,
  type ConverterHint,
  type Payload,
  type PayloadConverter,
  type SerializationContext,
} from '@temporalio/common';
import { decode } from '@temporalio/common/lib/encoding';
import { undecodablePayload } from '../shared/undecodable';

/**
 * Metadata a tolerant codec adds to a payload it could not decode (see `AesGcmCodec`), so the
 * converter can say why.
 */
export const METADATA_DECODE_ERROR_KEY = 'durable-agent-decode-error';

/**
 * Temporal's default converter, except that a payload owned by a workflow (its start input, a
 * signal, update or query argument) that cannot be decoded becomes an `UndecodablePayload` value
 * instead of an exception: an exception there fails every workflow task of the run from then on,
 * and any client can send such a payload. Handlers reject or ignore that value; a start input so
 * encoded fails the run at once. Everything else (activity inputs and results) stays strict, so a
 * worker that lacks a key still fails the task and retries once it has it.
 *
 * Loaded by path (`DataConverter.payloadConverterPath`) and bundled into the workflow sandbox, so
 * it imports nothing but `@temporalio/common` and pure shared code.
 */
export class ClientInputTolerantConverter implements PayloadConverter {
  private readonly inner = new DefaultPayloadConverter();

  toPayload<T>(value: T, context?: SerializationContext, hint?: ConverterHint<T>): Payload {
    return this.inner.toPayload(value, context, hint);
  }

  fromPayload<T>(payload: Payload, context?: SerializationContext, hint?: ConverterHint<T>): T {
    if (context?.type !== 'workflow') return this.inner.fromPayload(payload, context, hint);
    try {
      return this.inner.fromPayload(payload, context, hint);
    } catch (err) {
      return undecodablePayload(
        metadataText(payload, METADATA_ENCODING_KEY) ?? '(none)',
        metadataText(payload, METADATA_DECODE_ERROR_KEY) ?? (err instanceof Error ? err.message : String(err)),
      ) as T;
    }
  }
}

function metadataText(payload: Payload, key: string): string | undefined {
  const bytes = payload.metadata?.[key];
  if (bytes === undefined || bytes === null) return undefined;
  try {
    return decode(bytes);
  } catch {
    return '(not UTF-8)';
  }
}

export const payloadConverter = new ClientInputTolerantConverter();
