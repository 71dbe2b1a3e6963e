import type { McpServerConfig } from '../shared/mcp';

/**
 * Environment-variable expansion as Claude Code does it in `mcpServers`: `${VAR}` is the variable's
 * value and `${VAR:-default}` falls back to the default when it is unset or empty; it applies to a
 * stdio server's command, args and env values and to an HTTP server's url and header values. A
 * variable that is unset and has no default is an error naming it.
 */
const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function expandString(text: string, env: Readonly<Record<string, string | undefined>>, missing: Set<string>) {
  return text.replace(PATTERN, (_whole, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    missing.add(name);
    return '';
  });
}

const expandMap = (
  map: Record<string, string> | undefined,
  env: Readonly<Record<string, string | undefined>>,
  missing: Set<string>,
) => (map ? Object.fromEntries(Object.entries(map).map(([k, v]) => [k, expandString(v, env, missing)])) : undefined);

/** The configuration with its variables expanded, or the names of the variables that are missing. */
export function expandConfig(
  config: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: McpServerConfig } | { ok: false; missing: string[] } {
  const missing = new Set<string>();
  let expanded: McpServerConfig;
  if (config.type === 'http') {
    const headers = expandMap(config.headers, env, missing);
    expanded = { type: 'http', url: expandString(config.url, env, missing), ...(headers ? { headers } : {}) };
  } else {
    const envMap = expandMap(config.env, env, missing);
    expanded = {
      command: expandString(config.command, env, missing),
      ...(config.args ? { args: config.args.map((a) => expandString(a, env, missing)) } : {}),
      ...(envMap ? { env: envMap } : {}),
    };
  }
  return missing.size ? { ok: false, missing: [...missing].sort() } : { ok: true, config: expanded };
}
