import { promises as fs } from 'node:fs';
import { resolveInWorkspace } from '../tools';
import type { RunToolInput } from '../shared';

/**
 * The `is_error` text a model receives instead of a second execution of a mutating tool whose
 * earlier attempt may have started. It says what happened and, for file tools, what the file
 * looks like now, so the model can check before deciding to repeat the call.
 */
export async function outcomeUnknownMessage(input: RunToolInput, workspace: string, attempt: number): Promise<string> {
  const lines = [
    `Error: the outcome of this ${input.name} call is unknown. An earlier attempt (${attempt - 1} before this one) ` +
      'may have started before the worker running it was lost or timed out, so it was NOT run again ' +
      'automatically to avoid doing it twice.',
  ];
  const target = fileTarget(input);
  if (target) {
    try {
      const stat = await fs.stat(await resolveInWorkspace(workspace, target));
      lines.push(`Current state of ${target}: exists, ${stat.size} bytes, modified ${stat.mtime.toISOString()}.`);
    } catch {
      lines.push(`Current state of ${target}: does not exist (or is outside the workspace).`);
    }
    lines.push('Read the file to see whether the change was applied, then repeat the call only if it was not.');
  } else {
    lines.push(
      'Check whether its effects happened (for example by inspecting files or processes) before repeating it.',
    );
  }
  return lines.join('\n');
}

function fileTarget(input: RunToolInput): string | undefined {
  if (input.name !== 'write_file' && input.name !== 'edit_file') return undefined;
  const args = input.input as { path?: unknown } | null;
  return args && typeof args.path === 'string' ? args.path : undefined;
}
