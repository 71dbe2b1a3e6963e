import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** Reading a history as the server stores it, to check what is (not) in plaintext there. */

/** The whole history as the server returns it (no data converter), protobuf-encoded: the stored bytes. */
export async function rawHistory(client: Client, workflowId: string): Promise<Buffer> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: 'default',
      execution: { workflowId },
      nextPageToken,
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return Buffer.from(temporal.api.history.v1.History.encode({ events }).finish());
}

/** Paths of the payloads in `value` whose encoding is not binary/encrypted. */
export function plainPayloadPaths(value: unknown, at = ''): string[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return [];
  const record = value as Record<string, unknown>;
  const encoding = (record.metadata as Record<string, Uint8Array> | undefined)?.encoding;
  if (encoding instanceof Uint8Array && 'data' in record) {
    return Buffer.from(encoding).toString() === 'binary/encrypted' ? [] : [at];
  }
  return Object.entries(record).flatMap(([k, v]) => plainPayloadPaths(v, `${at}.${k}`));
}

export const found = (raw: Buffer, markers: Record<string, string>) =>
  Object.entries(markers)
    .filter(([, marker]) => raw.includes(marker))
    .map(([name]) => name);
