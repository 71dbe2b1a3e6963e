#!/usr/bin/env node
// Sets up what is missing, idempotently and fast when nothing is: npm dependencies, the compiled
// code and workflow bundle, and the Temporal CLI (built from its Go module and cached per user).
// Plain Node with no dependencies, because it runs before `npm install` has.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');
const say = (line) => process.stderr.write(`[setup] ${line}\n`);

function run(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'] });
  if (result.status !== 0) {
    say(`'${cmd} ${args.join(' ')}' failed with exit code ${result.status}`);
    process.exit(result.status ?? 1);
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
  // `npm install`, not `npm ci`: npm 11 refuses `ci` when the lockfile lacks other platforms'
  // optional packages (@swc/core-darwin-*), although the install itself resolves them fine.
  say('installing npm dependencies (npm install)…');
  run('npm', ['install', '--no-audit', '--no-fund']);
}

// 2. Build: compile and bundle the workflows when any source is newer than the last build.
const stamp = path.join(root, 'dist', '.build-stamp');
const sources = ['src', 'scripts', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
const newestSource = Math.max(...sources.map((s) => newestMtime(path.join(root, s))));
if (!existsSync(stamp) || statSync(stamp).mtimeMs < newestSource) {
  say('building (tsc + workflow bundle)…');
  run('npm', ['run', '--silent', 'build']);
  writeFileSync(stamp, new Date().toISOString());
}

// 3. bubblewrap: bash runs its commands in it on Linux and refuses to run them without it (unless
// DURABLE_AGENT_SANDBOX=off). Not fatal here: everything else works without it.
if (process.platform === 'linux' && process.env.DURABLE_AGENT_SANDBOX !== 'off') {
  const probe = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    say(
      'bubblewrap (bwrap) is not installed: the bash tool will refuse to run commands. Install it with ' +
        "'sudo apt-get install bubblewrap' (Fedora: 'sudo dnf install bubblewrap'), or set DURABLE_AGENT_SANDBOX=off " +
        'to run commands unsandboxed (see docs/sandbox.md).',
    );
  } else if (!quiet) {
    say(`sandbox: ${probe.stdout.trim()}`);
  }
}

// 4. The Temporal CLI: env, PATH, cache, go install, download — or an exact message.
const require = createRequire(import.meta.url);
const { findTemporalCli } = require(path.join(root, 'dist', 'src', 'server', 'temporal-cli.js'));
try {
  const cli = await findTemporalCli({ log: say });
  if (!quiet) say(`Temporal CLI: ${cli}`);
} catch (err) {
  say(err.message);
  process.exit(1);
}
