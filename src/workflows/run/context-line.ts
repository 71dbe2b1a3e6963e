import { cutChars, utf8Length } from '../../shared/bounds';
import type { RunContext } from './run-state';

/*
 * What the run's Current Details say about its context. Here, beside the state it reads, so that the
 * run's parts (run.ts) need not import the call that prepares the run (calls/prepare-run.ts).
 */

/** One line for the run's details: what the system prompt was assembled from. */
export function describeContext(context: RunContext | undefined, servers?: string): string | undefined {
  if (!context) return undefined;
  return `${describedSources(context)}${servers ? ` · ${cutChars(servers, 60)}` : ''}`;
}

/**
 * The sources and size part, once per context: the details are rendered on every run event. The
 * only sources changed in place are `mcp_server` entries (`McpTools.carryIn`, calls/mcp-tools.ts), which are not part of it.
 */
// eslint-disable-next-line no-restricted-syntax -- keyed by the run's own context object: no run can reach another's entry.
const sourcesShown = new WeakMap<RunContext, string>();

function describedSources(context: RunContext): string {
  const known = sourcesShown.get(context);
  if (known !== undefined) return known;
  const parts = context.sources
    .filter((s) => s.kind !== 'mcp_server')
    .map((s) => {
      // Each part by its file, or by its section's title (`Identity`, `Environment`): the kind alone
      // (`default, default, …`) said nothing.
      const source = s as { kind: string; path?: unknown; title?: unknown };
      if (typeof source.path === 'string') return source.path;
      return typeof source.title === 'string' && source.title ? cutChars(source.title, 40) : source.kind;
    });
  const kb = (utf8Length(context.system) / 1024).toFixed(1);
  // One short line: the frame for Current Details is small (the transcript has the whole prompt).
  const shown = parts.length > 3 ? [...parts.slice(0, 3), `+${parts.length - 3} more`] : parts;
  const described = `${cutChars(shown.join(', ') || 'empty', 80)} · ${kb} KiB`;
  sourcesShown.set(context, described);
  return described;
}
