import { agentActivityType } from '../shared/activity-names';

/**
 * The agent's activity proxy scheduling `durableAgent.<name>` (runs with the
 * 'prefixed-activity-names' patch), or the bare names as runs recorded before it did. `proxy` is
 * what `proxyActivities` / `proxyLocalActivities` returned: it makes an activity for any name.
 */
export function agentActivities<T extends object>(proxy: T, prefixed: boolean | undefined): T {
  if (!prefixed) return proxy;
  return new Proxy(proxy, {
    get: (target, name) =>
      typeof name === 'string' ? (target as Record<string, unknown>)[agentActivityType(name)] : undefined,
  });
}
