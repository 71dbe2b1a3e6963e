/** A checkpoint id names a manifest in the store: the SHA-256 of its bytes, 64 lowercase hex digits. */
export function isCheckpointIdText(id: unknown): id is string {
  return typeof id === 'string' && /^[0-9a-f]{64}$/.test(id);
}
