/**
 * The README's tour, as a new user without a key runs it: `run --output-schema FILE --json` with the
 * offline demo model, in a checkout whose build output .gitignore names. It completes with a typed
 * answer, from the files git would show, the largest of them all measured.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { durableAgent } from '../cli/cli-helpers';
import { tempWorkspace, uniqueQueue } from '../support/temporal';

jest.setTimeout(90_000);

test('run --output-schema … --json completes on the offline demo, without a key', async () => {
  const workspace = await tempWorkspace('offline-cli');
  const write = async (rel: string, bytes: number) => {
    await fs.mkdir(path.dirname(path.join(workspace, rel)), { recursive: true });
    await fs.writeFile(path.join(workspace, rel), 'x'.repeat(bytes));
  };
  await fs.writeFile(path.join(workspace, '.gitignore'), 'node_modules\ndist/\n');
  await write('src/index.ts', 300);
  await write('src/cli/big.ts', 7000);
  await write('dist/src/index.d.ts', 50_000);
  const schemaFile = path.join(workspace, 'answer.schema.json');
  await fs.writeFile(
    schemaFile,
    JSON.stringify({
      type: 'object',
      properties: { files: { type: 'array', items: { type: 'string' } }, largest: { type: 'string' } },
      required: ['files', 'largest'],
      additionalProperties: false,
    }),
  );
  const out = await durableAgent(
    [
      'run',
      'List the TypeScript files here and tell me which one is largest',
      '--model',
      'offline-demo',
      '--workspace',
      workspace,
      '--output-schema',
      schemaFile,
      '--json',
    ],
    { taskQueue: uniqueQueue('offline-cli'), env: { DURABLE_AGENT_STICKY_ACTIVITIES: '0' } },
  );
  expect({ code: out.code, stderr: out.stderr }).toMatchObject({ code: 0 });
  const result = JSON.parse(out.stdout) as { exitReason: string; iterations: number; output: unknown };
  expect(result).toMatchObject({ exitReason: 'completed', iterations: 3 });
  expect(result.output).toEqual({ files: ['src/cli/big.ts', 'src/index.ts'], largest: 'src/cli/big.ts' });
});
