import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { deployDir } from './cluster';

/**
 * deploy/worker.env: the worker settings of the deployment (compose's `env_file`), as `KEY=value`
 * lines with `#` comments. The cluster test and bench start their workers with it.
 */
export function deployedWorkerEnv(file = path.join(deployDir(), 'worker.env')): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`${file}: not KEY=value: ${line}`);
    env[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return env;
}
