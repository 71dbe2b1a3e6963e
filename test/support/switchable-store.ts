import type { CheckpointStore } from '../../src/checkpoints';

/** A store whose calls fail while `down` is set, as a stopped or unreachable server's do. */
export class SwitchableStore implements CheckpointStore {
  down = false;
  readonly description = 'switchable';
  constructor(private readonly inner: CheckpointStore) {}
  private check(): void {
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
  }
  async hasBlob(hash: string) {
    this.check();
    return this.inner.hasBlob(hash);
  }
  async putBlob(hash: string, data: Buffer) {
    this.check();
    return this.inner.putBlob(hash, data);
  }
  async getBlob(hash: string) {
    this.check();
    return this.inner.getBlob(hash);
  }
  async putManifest(id: string, bytes: Buffer) {
    this.check();
    return this.inner.putManifest(id, bytes);
  }
  async getManifest(id: string) {
    this.check();
    return this.inner.getManifest(id);
  }
}
