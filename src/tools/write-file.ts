import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { defineTool } from './define-tool';
import { plural, splitLines } from './text';
import { realWorkspace, resolveInWorkspace, workspaceRelative } from './workspace';

const writeFileInput = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe(
      'Path of the file to write, relative to the workspace (or absolute inside it). Missing folders are created.',
    ),
  content: z.string().describe('The complete new content of the file (UTF-8). Replaces any existing content.'),
});

/** Create or overwrite a file in the workspace. */
export function createWriteFileTool() {
  return defineTool({
    name: 'write_file',
    description:
      'Write a file in the workspace, creating it (and any missing parent folders) or replacing its whole ' +
      'content. To change part of an existing file, prefer edit_file. Reports the number of bytes and lines written.',
    inputSchema: writeFileInput,
    sideEffect: 'mutating',
    async execute(input, ctx) {
      const root = await realWorkspace(ctx.workspace);
      const absolute = await resolveInWorkspace(ctx.workspace, input.path);
      const shown = workspaceRelative(root, absolute);
      const existing = await fs.stat(absolute).catch(() => undefined);
      if (existing?.isDirectory()) throw new Error(`'${shown}' is a directory; give the path of a file to write.`);

      await fs.mkdir(path.dirname(absolute), { recursive: true });
      await fs.writeFile(absolute, input.content, 'utf8');
      const bytes = Buffer.byteLength(input.content, 'utf8');
      return `Wrote ${plural(bytes, 'byte')} (${plural(splitLines(input.content).length, 'line')}) to ${shown}`;
    },
  });
}
