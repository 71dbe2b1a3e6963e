import { probeBwrap } from './bwrap';
import { hasMemoryCgroup, processLimitMechanism } from './cgroup';
import { limitsFromEnv } from './limits';

/**
 * Which sandbox the bash tool uses: `DURABLE_AGENT_SANDBOX` = `bwrap` (the default) or `off`.
 * Read once per process, with bwrap's availability, and reported by {@link sandboxStatus} so the
 * worker's log and a run's details can say how commands run.
 */

export const SANDBOX_ENV_VAR = 'DURABLE_AGENT_SANDBOX';
export const SANDBOX_MODES = ['bwrap', 'off'] as const;
export type SandboxSetting = (typeof SANDBOX_MODES)[number];

/** How to get a sandbox, said wherever one is missing. */
export const INSTALL_BWRAP_HINT =
  'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) ' +
  `or set ${SANDBOX_ENV_VAR}=off to run commands unsandboxed, with the worker's rights, network and files.`;

export interface SandboxStatus {
  /**
   * `bwrap`: commands run sandboxed. `off`: unsandboxed, by the operator's choice. `unavailable`:
   * a sandbox was asked for and cannot be had (no bwrap, no user namespaces, not Linux, a bad
   * setting), so bash refuses every command.
   */
  mode: 'bwrap' | 'off' | 'unavailable';
  /** One line for the operator: how commands run, or why they cannot. */
  detail: string;
  /** Path of the bwrap binary in use (mode `bwrap`). */
  bwrap?: string;
}

/** Reads the setting; an unknown value is an error that names the variable and the valid values. */
export function sandboxSetting(env: NodeJS.ProcessEnv = process.env): SandboxSetting {
  const raw = env[SANDBOX_ENV_VAR] ?? '';
  if (raw === '') return 'bwrap';
  // Exactly as documented: `OFF`, ` off` or `0` are not guessed at (bash then refuses every command).
  if ((SANDBOX_MODES as readonly string[]).includes(raw)) return raw as SandboxSetting;
  throw new Error(`${SANDBOX_ENV_VAR} must be one of ${SANDBOX_MODES.join(', ')} (exactly), got '${raw}'`);
}

/** Works the status out from the environment and this machine (runs bwrap once). */
export function detectSandbox(env: NodeJS.ProcessEnv = process.env, platform = process.platform): SandboxStatus {
  let setting: SandboxSetting;
  try {
    setting = sandboxSetting(env);
  } catch (err) {
    return { mode: 'unavailable', detail: `bash refuses every command: ${(err as Error).message}.` };
  }
  if (setting === 'off') {
    return {
      mode: 'off',
      detail:
        `WARNING: bash runs commands UNSANDBOXED (${SANDBOX_ENV_VAR}=off): with the worker's rights, its network ` +
        'and every file it can reach. Unset it to run them in bubblewrap.',
    };
  }
  if (platform !== 'linux') {
    return {
      mode: 'unavailable',
      detail:
        `bash refuses every command: the bubblewrap sandbox exists only on Linux (this is ${platform}). ` +
        `Set ${SANDBOX_ENV_VAR}=off to run commands unsandboxed, with the worker's rights, network and files.`,
    };
  }
  const probe = probeBwrap();
  if (!probe.ok)
    return { mode: 'unavailable', detail: `bash refuses every command: ${probe.reason}. ${INSTALL_BWRAP_HINT}` };
  let limits;
  try {
    limits = limitsFromEnv(env);
  } catch (err) {
    return { mode: 'unavailable', detail: `bash refuses every command: ${(err as Error).message}.` };
  }
  const mechanism = processLimitMechanism();
  const processes =
    mechanism.kind === 'none'
      ? `WARNING: ${mechanism.reason ?? 'processes per call are not limited'}`
      : `at most ${limits.maxProcesses} processes per call (${mechanism.kind === 'cgroup' ? 'a pids cgroup' : 'RLIMIT_NPROC'})`;
  const memoryCgroup = hasMemoryCgroup(mechanism);
  const cpuCgroup = (mechanism.groups ?? []).some((g) => g.controllers.includes('cpu'));
  const memory =
    `${Math.round(limits.maxMemoryBytes / 1024 ** 2)} MiB of memory per call ` +
    `(${memoryCgroup ? 'a memory cgroup' : 'RLIMIT_DATA per process'}), ` +
    (cpuCgroup ? `${limits.maxCpus} CPUs per call (a cpu cgroup)` : 'CPU not limited');
  return {
    mode: 'bwrap',
    bwrap: probe.path,
    detail:
      `bash runs commands in a bubblewrap sandbox (${probe.path}): system read-only, workspace writable, private /tmp, ` +
      `no network unless the run allows it, a clean environment, ${processes}, ${memory}, ` +
      `${Math.round(limits.tmpfsBudgetBytes / 1024 ** 2)} MiB of /tmp and /dev/shm across concurrent calls.`,
  };
}

let cached: SandboxStatus | undefined;

/**
 * This process's sandbox status, worked out on first use and kept (the environment is read once,
 * like the worker's other settings). For the worker's startup line and a run's details.
 */
export function sandboxStatus(): SandboxStatus {
  cached ??= detectSandbox();
  return cached;
}

/** Forget the cached status (tests that change `DURABLE_AGENT_SANDBOX`). */
export function resetSandboxStatus(): void {
  cached = undefined;
}
