/**
 * The agent's activities are registered and scheduled as `durableAgent.<name>`, so they cannot
 * collide with a user's own activities on the same worker and task queue. Runs started by 0.1.x
 * code before the prefix scheduled the bare names, which the CLI's worker still registers.
 */
export const AGENT_ACTIVITY_PREFIX = 'durableAgent.';

/** The activity type a run schedules for `name`. */
export function agentActivityType(name: string): string {
  return `${AGENT_ACTIVITY_PREFIX}${name}`;
}

/** `callModel` for `durableAgent.callModel` and for the bare `callModel` of older runs; other names as they are. */
export function baseActivityName(activityType: string): string {
  return activityType.startsWith(AGENT_ACTIVITY_PREFIX)
    ? activityType.slice(AGENT_ACTIVITY_PREFIX.length)
    : activityType;
}

/** `activities` keyed by their prefixed activity types. */
export function prefixedActivities<T extends object>(activities: T): Record<string, T[keyof T]> {
  return Object.fromEntries(Object.entries(activities).map(([name, fn]) => [agentActivityType(name), fn])) as Record<
    string,
    T[keyof T]
  >;
}
