import { existsSync } from 'node:fs';
import { cachedWeedPath, startWeedServer, type SeaweedServer } from '../../src/server/seaweedfs';

export type { SeaweedServer };

/**
 * A real S3-compatible server for the checkpoint tests: SeaweedFS (`weed server -s3`) on 127.0.0.1,
 * its data in a temporary directory, one access key, one bucket. The binary is built once into the
 * per-user cache by `node scripts/ensure-setup.mjs --for-tests`; without it the S3 tests skip and say
 * so (and fail under CI, where setup must have built it).
 */

export const ACCESS_KEY = 'durable-agent-test';
export const SECRET_KEY = 'durable-agent-test-secret-0123456789';

/** The binary, or why the S3 tests cannot run. */
export function weedBinary(): { path: string } | { missing: string } {
  const fromEnv = process.env.SEAWEEDFS_WEED;
  const candidate = fromEnv || cachedWeedPath();
  if (existsSync(candidate)) return { path: candidate };
  return {
    missing: `SeaweedFS is not built (${candidate}): run 'node scripts/ensure-setup.mjs --for-tests' to build it (many minutes, once).`,
  };
}

/**
 * `describe`, or `describe.skip` with the reason printed (setup builds SeaweedFS, but a failed build only
 * warns: the checkpoint store is not yet used by runs). With DA_REQUIRE_SEAWEEDFS=1 a missing binary fails.
 */
export function describeWithSeaweedfs(name: string, body: () => void): void {
  const found = weedBinary();
  if ('path' in found) {
    describe(name, body);
    return;
  }
  if (process.env.DA_REQUIRE_SEAWEEDFS === '1') {
    describe(name, () => test('SeaweedFS is available', () => expect(found.missing).toBe('')));
    return;
  }
  process.stderr.write(`[skip] ${name}: ${found.missing}\n`);
  describe.skip(name, body);
}

/** The server with the tests' identity and `bucket`. */
export async function startSeaweedfs(bucket = 'checkpoints'): Promise<SeaweedServer> {
  const found = weedBinary();
  if (!('path' in found)) throw new Error(found.missing);
  return startWeedServer({
    weed: found.path,
    bucket,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
}
