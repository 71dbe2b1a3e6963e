#!/usr/bin/env node
// Sets up what is missing, idempotently and fast when nothing is: npm dependencies, the compiled
// code and workflow bundle, the system packages (bubblewrap; with --for-tests also Chromium,
// PostgreSQL and openssl, installed with apt-get when allowed, else the command to run), the
// Temporal CLI and, with --for-tests, the Temporal server and its sql tool and SeaweedFS (an S3-compatible
// server for the checkpoint store tests), all built from their Go modules and cached per user. Every long step says what it does and how long it took.
// Plain Node with no dependencies, because it runs before `npm install` has.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePackages, longStep } from './setup-system.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');
const forTests = process.argv.includes('--for-tests');
const say = (line) => process.stderr.write(`[setup] ${line}\n`);

async function run(label, cmd, args, env = process.env) {
  process.chdir(root);
  const code = await longStep(say, label, cmd, args, { quiet, env });
  if (code !== 0) {
    say(`'${cmd} ${args.join(' ')}' failed with exit code ${code}`);
    process.exit(code || 1);
  }
}

function newestMtime(target) {
  if (!existsSync(target)) return 0;
  const stat = statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

// 1. Dependencies: install when node_modules is missing or older than the lockfile.
const installedMarker = path.join(root, 'node_modules', '.package-lock.json');
if (
  !existsSync(installedMarker) ||
  statSync(installedMarker).mtimeMs < statSync(path.join(root, 'package-lock.json')).mtimeMs
) {
  // re2 (glob/grep's regex engine) builds with node-gyp when no prebuilt binary can be downloaded:
  // it needs Node's headers, which a distribution's Node installs in /usr/include/node.
  const nodedir =
    !process.env.npm_config_nodedir && existsSync('/usr/include/node/node.h') ? { npm_config_nodedir: '/usr' } : {};
  await run('installing npm dependencies (npm install)', 'npm', ['install', '--no-audit', '--no-fund'], {
    ...process.env,
    ...nodedir,
  });
}

// 2. Build: compile and bundle the workflows when any source is newer than the last build.
const stamp = path.join(root, 'dist', '.build-stamp');
const sources = ['src', 'scripts', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const newestSource = Math.max(...sources.map((s) => newestMtime(path.join(root, s))));
if (!existsSync(stamp) || statSync(stamp).mtimeMs < newestSource) {
  await run('building (tsc + workflow bundle)', 'npm', ['run', '--silent', 'build']);
  writeFileSync(stamp, new Date().toISOString());
}

// 3. System packages. bash runs its commands in bubblewrap on Linux and refuses them without it
// (unless DURABLE_AGENT_SANDBOX=off); the tests also drive Chromium, run PostgreSQL and make certificates.
const sandboxed = process.platform === 'linux' && process.env.DURABLE_AGENT_SANDBOX !== 'off';
const packages = [...(sandboxed ? ['bubblewrap'] : []), ...(forTests ? ['chromium', 'postgresql', 'openssl'] : [])];
const problem = await ensurePackages(packages, say, quiet);
if (problem) {
  say(problem);
  if (sandboxed && !forTests) say('(or set DURABLE_AGENT_SANDBOX=off to run commands unsandboxed: docs/sandbox.md)');
  process.exit(1);
}

// 4. The Temporal CLI: env, PATH, cache, go install, download — or an exact message.
const require = createRequire(import.meta.url);
/** Awaits `promise`, saying every 30 s that `label` still runs (Go builds take minutes). */
async function withProgress(label, promise) {
  const started = Date.now();
  const ticker = setInterval(() => say(`still ${label} (${Math.round((Date.now() - started) / 1000)} s)`), 30_000);
  try {
    return await promise;
  } finally {
    clearInterval(ticker);
  }
}
const { findTemporalCli } = require(path.join(root, 'dist', 'src', 'server', 'temporal-cli.js'));
try {
  const cli = await withProgress('looking for or building the Temporal CLI', findTemporalCli({ log: say }));
  if (!quiet) say(`Temporal CLI: ${cli}`);
} catch (err) {
  say(err.message);
  process.exit(1);
}

// 5. Tests only: the Temporal server and its schema tool, for the cluster tests (a few minutes, once).
if (forTests) {
  const { cachedServerBinaries, ensureServerBinaries } = require(
    path.join(root, 'dist', 'scripts', 'cluster', 'binaries.js'),
  );
  const cached = cachedServerBinaries();
  if (!existsSync(cached.server) || !existsSync(cached.sql) || !existsSync(cached.schemaDir)) {
    const started = Date.now();
    try {
      await withProgress('building the Temporal server', ensureServerBinaries(say));
    } catch (err) {
      say(err.message);
      process.exit(1);
    }
    say(`Temporal server and sql tool ready (${Math.round((Date.now() - started) / 1000)} s)`);
  }
}

// 6. Tests only: SeaweedFS, the S3-compatible server the checkpoint store tests run against (built once).
if (forTests) {
  const { cachedWeedPath, ensureWeed } = require(path.join(root, 'dist', 'src', 'server', 'seaweedfs.js'));
  if (!existsSync(cachedWeedPath())) {
    const started = Date.now();
    try {
      await withProgress('building SeaweedFS', ensureWeed(say));
      say(`SeaweedFS ready (${Math.round((Date.now() - started) / 1000)} s)`);
    } catch (err) {
      // Not fatal: only the checkpoint store's S3 tests need it, and they say they were skipped.
      say(`SeaweedFS could not be built, so the S3 checkpoint store tests will be skipped: ${err.message}`);
    }
  }
}
