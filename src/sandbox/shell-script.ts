/**
 * Where a shell started as a command (`bash -lc '…'`) keeps its command line, so the command policy
 * can read it like any other.
 */

/** Shells whose `-c` string the policy reads as a command line. */
export const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'rbash']);
/** Long shell options that take the next word as their value. */
const SHELL_LONG_OPTIONS_WITH_VALUE = new Set(['--rcfile', '--init-file']);

/**
 * The command string of a shell started with `-c`, however its options are spelled: `-c`, `-lc`,
 * `-ec`, `-o pipefail -c`, `-c -- '…'` (only `-c` on its own was seen, so `bash -lc 'sudo id'`,
 * the form models write most, passed). Undefined when the shell runs a script file or reads stdin.
 */
export function shellScript(args: string[]): string | undefined {
  let command = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--' || arg === '-') return command ? args[i + 1] : undefined;
    if (/^[-+][A-Za-z]+$/.test(arg)) {
      if (arg[0] === '-' && arg.includes('c')) command = true;
      // -o/+o name, -O/+O shopt: the option's value is the next word.
      if (/[oO]/.test(arg)) i++;
      continue;
    }
    if (arg.startsWith('--')) {
      if (SHELL_LONG_OPTIONS_WITH_VALUE.has(arg)) i++;
      continue;
    }
    return command ? arg : undefined;
  }
  return undefined;
}
