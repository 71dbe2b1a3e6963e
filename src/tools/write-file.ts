import { z } from 'zod';
import { defineTool } from './define-tool';
import { openRegularFile, replaceFile, withLocated, type Located } from '../safe-fs';
import { describeTextProblem, fileTextProblem } from '../safe-fs/text-check';
import { plural, splitLines } from './text';

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
      const options = { followLinks: true, createDirs: true };
      return withLocated(ctx.workspace, input.path, options, async (located) => {
        if (located.stat?.isDirectory() || located.name === undefined) {
          throw new Error(`'${located.shown}' is a directory; give the path of a file to write.`);
        }
        if (located.stat) await refuseNonText(located);
        // A new file renamed over the old one: other hard links to the old file keep their content.
        const data = Buffer.from(input.content, 'utf8');
        await replaceFile(located, data);
        const lines = splitLines(input.content).length;
        return `Wrote ${plural(data.length, 'byte')} (${plural(lines, 'line')}) to ${located.shown}`;
      });
    },
  });
}

/**
 * An existing file that is binary or not UTF-8 is not overwritten: the model cannot have read it
 * (read_file shows such bytes as U+FFFD or refuses), so replacing it is almost surely a mistake.
 */
async function refuseNonText(located: Located): Promise<void> {
  if (!located.stat?.isFile()) return;
  const { handle } = await openRegularFile(located);
  try {
    const problem = await fileTextProblem(handle);
    if (problem) throw new Error(describeTextProblem(located.shown, problem, 'write_file'));
  } finally {
    await handle.close();
  }
}
