import { promises as fs } from 'node:fs';
import { outputSchemaProblem } from '../activities/output-validator';
import { MAX_OUTPUT_SCHEMA_BYTES, type OutputSchema } from '../shared';
import { PromptRefused } from './prompt-source';

/**
 * `--output-schema FILE`: a JSON Schema object from a file, checked here as the worker will check
 * it (the same validator), so a bad schema is refused before anything starts (exit code 2).
 */
export async function readOutputSchemaFile(file: string): Promise<OutputSchema> {
  const refuse = (why: string) => new PromptRefused(`--output-schema ${file}: ${why}`);
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw refuse(code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? (e as Error).message})`);
  }
  if (!stat.isFile()) throw refuse('not a regular file');
  if (stat.size > MAX_OUTPUT_SCHEMA_BYTES * 4) {
    throw refuse(`${stat.size} bytes; a schema may be at most ${MAX_OUTPUT_SCHEMA_BYTES} bytes as JSON`);
  }
  let schema: unknown;
  try {
    schema = JSON.parse((await fs.readFile(file, 'utf8')).replace(/^\uFEFF/, ''));
  } catch (e) {
    throw refuse(`not JSON (${(e as Error).message})`);
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw refuse('a JSON Schema must be a JSON object, such as {"type": "object", "properties": {…}}');
  }
  const problem = outputSchemaProblem(schema);
  if (problem !== undefined) throw refuse(`not valid JSON Schema: ${problem}`);
  return schema as OutputSchema;
}
