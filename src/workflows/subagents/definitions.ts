import { log, proxyActivities } from '@temporalio/workflow';
import { cutBytes, cutChars } from '../../shared/bounds';
import {
  AGENT_NAME_PATTERN,
  MAX_AGENT_DESCRIPTION_CHARS,
  MAX_AGENT_NAME_CHARS,
  MAX_AGENT_PROMPT_BYTES,
  type AgentDefinition,
  type AgentDefinitionSource,
  type LoadAgentDefinitionsInput,
  type LoadAgentDefinitionsResult,
} from '../../shared/subagents';
import { agentActivities } from '../calls/activity-proxy';
import type { ParsedInput } from '../run/settings';

/** Definitions a run keeps at most (input ones first); more are left out with a notice. */
const MAX_DEFINITIONS = 64;
const SOURCES: readonly AgentDefinitionSource[] = ['input', 'operator', 'workspace'];

/** The worker's activity that reads agent files (operator's and the workspace's). */
interface AgentDefinitionActivities {
  loadAgentDefinitions(input: LoadAgentDefinitionsInput): Promise<LoadAgentDefinitionsResult>;
}

/** The run input's `agents`, as definitions. */
export function inputDefinitions(agents: ParsedInput['agents']): AgentDefinition[] {
  return Object.entries(agents ?? {}).map(([name, a]) => ({
    name,
    description: a.description,
    prompt: a.prompt,
    ...(a.tools ? { tools: a.tools } : {}),
    ...(a.model ? { model: a.model } : {}),
    source: 'input' as const,
  }));
}

/**
 * The worker's agent definitions (an ordinary activity, recorded in history). A worker
 * without the activity, or one that fails, leaves the run with its input's definitions: the notice
 * says so, and the run goes on.
 */
export async function loadWorkerDefinitions(
  workspace: string | undefined,
  notice: (message: string) => void,
): Promise<AgentDefinition[]> {
  const { loadAgentDefinitions } = agentActivities(
    proxyActivities<AgentDefinitionActivities>({
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '500 milliseconds', maximumAttempts: 2 },
    }),
  );
  try {
    const result = await loadAgentDefinitions.executeWithOptions({ summary: 'agent definitions' }, [
      workspace ? { workspace } : {},
    ]);
    const warnings = Array.isArray(result?.warnings) ? result.warnings.slice(0, 10) : [];
    for (const w of warnings) notice(`agent definitions: ${cutChars(String(w), 300)}`);
    return (Array.isArray(result?.agents) ? result.agents : []).flatMap((raw) => {
      const def = checkedDefinition(raw);
      return def ? [def] : [];
    });
  } catch (err) {
    log.warn('agent definitions could not be loaded', { error: String(err) });
    notice("agent definitions could not be loaded from the worker; only the run input's agents are available");
    return [];
  }
}

/** Input definitions win over the worker's of the same name; the list is bounded. */
export function mergeDefinitions(own: AgentDefinition[], loaded: AgentDefinition[]): AgentDefinition[] {
  const byName = new Map<string, AgentDefinition>();
  for (const def of [...own, ...loaded]) if (!byName.has(def.name)) byName.set(def.name, def);
  return [...byName.values()].slice(0, MAX_DEFINITIONS);
}

/** A definition from the worker, checked as hostile data: the activity's result is a payload like any other. */
function checkedDefinition(raw: unknown): AgentDefinition | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const d = raw as Record<string, unknown>;
  if (typeof d.name !== 'string' || d.name.length > MAX_AGENT_NAME_CHARS || !AGENT_NAME_PATTERN.test(d.name)) {
    return undefined;
  }
  if (typeof d.description !== 'string' || typeof d.prompt !== 'string') return undefined;
  const tools = Array.isArray(d.tools)
    ? d.tools.filter((t): t is string => typeof t === 'string').slice(0, 64)
    : undefined;
  const source = SOURCES.includes(d.source as AgentDefinitionSource)
    ? (d.source as AgentDefinitionSource)
    : 'workspace';
  return {
    name: d.name,
    description: cutChars(d.description, MAX_AGENT_DESCRIPTION_CHARS),
    prompt: cutBytes(d.prompt, MAX_AGENT_PROMPT_BYTES),
    ...(tools ? { tools } : {}),
    ...(typeof d.model === 'string' && d.model && d.model.length <= 200 ? { model: d.model } : {}),
    source,
    ...(typeof d.path === 'string' ? { path: cutChars(d.path, 500) } : {}),
  };
}
