#!/usr/bin/env node
// `npm start -- "<prompt>"`: set up what is missing, then run the agent with an in-process worker,
// starting the embedded Temporal dev server when none answers at a loopback TEMPORAL_ADDRESS and
// neither TLS nor an API key is configured (docs/connection.md).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const setup = spawnSync(process.execPath, [path.join(root, 'scripts', 'ensure-setup.mjs'), '--quiet'], {
  stdio: 'inherit',
});
if (setup.status !== 0) process.exit(setup.status ?? 1);

const args = process.argv.slice(2);
const prompt = args.length > 0 ? args : ['List the TypeScript files here and tell me which one is largest'];
const cli = path.join(root, 'bin', 'durable-agent.js');
const result = spawnSync(process.execPath, [cli, 'run', ...prompt], { stdio: 'inherit' });
process.exit(result.status ?? 1);
