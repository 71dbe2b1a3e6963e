/**
 * An on/off setting from the environment: empty or `0`/`false`/`off`/`no` is off, `1`/`true`/`on`/`yes` is
 * on (any case); anything else throws an error that names the variable and what it accepts.
 */
export function parseSwitch(name: string, raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase() ?? '';
  if (value === '' || /^(0|false|off|no)$/.test(value)) return false;
  if (/^(1|true|on|yes)$/.test(value)) return true;
  throw new Error(`${name} must be 1, true, on or yes (or 0, false, off, no), got '${raw}'`);
}
