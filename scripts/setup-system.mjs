// The machine's part of the setup: Debian packages the project needs, installed with apt-get when
// this user is root or has password-less sudo; otherwise the one command to run. Plain Node.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

/** What a command needs, how to tell it is there, and the Debian package that provides it. */
const NEEDS = {
  bubblewrap: { why: "bash's sandbox", present: () => onPath('bwrap') },
  chromium: { why: 'the Web UI tests', present: () => existsSync('/usr/bin/chromium') || onPath('chromium') },
  postgresql: { why: "the cluster test's database", present: hasInitdb },
  openssl: { why: "the cluster's TLS certificates", present: () => onPath('openssl') },
};

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function hasInitdb() {
  if (onPath('initdb')) return true;
  const base = '/usr/lib/postgresql';
  return existsSync(base) && readdirSync(base).some((v) => existsSync(`${base}/${v}/bin/initdb`));
}

/** `sudo` when needed and allowed without a password, '' for root, undefined when neither. */
function privilege() {
  if (process.getuid?.() === 0) return '';
  return spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0 ? 'sudo' : undefined;
}

/**
 * Runs a long step with its output shown (or, when quiet, a line every 30 s), and says how long
 * it took. Resolves with the exit code.
 */
export function longStep(say, label, cmd, args, { quiet = false, env = process.env } = {}) {
  const started = Date.now();
  say(`${label}…`);
  const ticker = quiet
    ? setInterval(() => say(`still ${label} (${Math.round((Date.now() - started) / 1000)} s)`), 30_000)
    : undefined;
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', quiet ? 'ignore' : 'inherit', 'inherit'], env });
    child.on('error', () => resolve(127));
    child.on('exit', (code) => {
      clearInterval(ticker);
      if (code === 0) say(`${label}: done in ${Math.round((Date.now() - started) / 1000)} s`);
      resolve(code ?? 1);
    });
  });
}

/**
 * Makes sure the packages `names` are installed. Returns undefined when they are (or were just
 * installed), else the message that says what to run.
 */
export async function ensurePackages(names, say, quiet) {
  const missing = names.filter((n) => !NEEDS[n].present());
  if (missing.length === 0) return undefined;
  const list = missing.join(' ');
  const why = missing.map((n) => `${n} (${NEEDS[n].why})`).join(', ');
  if (process.platform !== 'linux' || !onPath('apt-get')) {
    return `missing: ${why}. Install them with your system's package manager, then re-run.`;
  }
  const sudo = privilege();
  const command = `sudo apt-get install -y ${list}`;
  if (sudo === undefined) return `missing: ${why}. Install them with:\n\n    ${command}\n\nthen re-run.`;
  const as = sudo ? ['sudo', '-n'] : [];
  const run = (label, args) =>
    longStep(say, label, as[0] ?? 'apt-get', [...as.slice(1), ...(as.length ? ['apt-get'] : []), ...args], {
      quiet,
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  if ((await run('updating the package lists (apt-get update)', ['update', '-q'])) !== 0) {
    return `apt-get update failed. Install the packages with:\n\n    ${command}\n\nthen re-run.`;
  }
  if ((await run(`installing ${list} (apt-get)`, ['install', '-y', '-q', ...missing])) !== 0) {
    return `apt-get install failed. Install them with:\n\n    ${command}\n\nthen re-run.`;
  }
  const still = missing.filter((n) => !NEEDS[n].present());
  return still.length ? `installed, but still not found: ${still.join(', ')}` : undefined;
}
