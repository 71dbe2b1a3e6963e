import { agentActivityType } from '../../shared/activity-names';

/**
 * The agent's activity proxy scheduling `durableAgent.<name>`, so the agent's activities never
 * collide with an embedding application's own. `proxy` is what `proxyActivities` /
 * `proxyLocalActivities` returned: it makes an activity for any name.
 */
export function agentActivities<T extends object>(proxy: T): T {
  return new Proxy(proxy, {
    get: (target, name) =>
      typeof name === 'string' ? (target as Record<string, unknown>)[agentActivityType(name)] : undefined,
  });
}
