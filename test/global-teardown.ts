import type { ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__daTemporal as
    { child?: ChildProcess; dir: string } | undefined;
  if (!state) return;
  const child = state.child;
  if (child) {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  }
  await fs.rm(state.dir, { recursive: true, force: true });
}
