/**
 * The bash tool's confinement: the bubblewrap sandbox (arguments, availability, mode), the command
 * policy checked before anything runs, and the registry of process groups that stops them all with
 * the worker. See docs/sandbox.md.
 */
export {
  bwrapArgs,
  bwrapProcessEnv,
  ETC_ALLOWLIST,
  findBwrap,
  probeBwrap,
  SANDBOX_HOME,
  SANDBOX_PATH,
  SANDBOX_SHM_BYTES,
  SANDBOX_TMP_BYTES,
  sandboxEnv,
} from './bwrap';
export {
  detectSandbox,
  INSTALL_BWRAP_HINT,
  resetSandboxStatus,
  SANDBOX_ENV_VAR,
  sandboxSetting,
  sandboxStatus,
  type SandboxSetting,
  type SandboxStatus,
} from './mode';
export {
  CommandPolicy,
  DEFAULT_RULES,
  MAX_COMMAND_BYTES,
  POLICY_ENV_VAR,
  policyFromEnv,
  refusalMessage,
  type PolicyConfig,
  type PolicyRefusal,
} from './policy';
export { KILL_GRACE_MS, ProcessRegistry, processRegistry, stopAllToolProcesses } from './processes';
export { spawnShell, type CallLimits } from './spawn';
export { CallCgroup, detectProcessLimit, processLimitMechanism, type ProcessLimitMechanism } from './cgroup';
export {
  DEFAULT_MAX_PROCESSES,
  DEFAULT_TMPFS_BUDGET_BYTES,
  limitsFromEnv,
  MAX_PROCESSES_ENV_VAR,
  MIN_TMPFS_GRANT_BYTES,
  TMPFS_BUDGET_ENV_VAR,
  TmpfsBudget,
  workerTmpfsBudget,
  type SandboxLimits,
} from './limits';
