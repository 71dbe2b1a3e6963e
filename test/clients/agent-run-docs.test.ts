/**
 * What the docs promise a library user holds for the code: every name the docs import from
 * `durable-agent` is exported by the package entry, and every error type a run's
 * `AgentRunResult.error.type` can carry is listed in docs/contracts.md.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as entry from '../../src';
import { ErrorTypes } from '../../src/shared/constants';

const repo = path.resolve(__dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(repo, file), 'utf8');

/** The value names (not `type …`) a doc's code imports from 'durable-agent'. */
function importedNames(markdown: string): string[] {
  const names: string[] = [];
  for (const match of markdown.matchAll(/import\s*\{([^}]*)\}\s*from\s*'durable-agent'/g)) {
    for (const part of match[1]!.split(',')) {
      const name = part.trim();
      if (name && !name.startsWith('type ')) names.push(name.split(/\s+as\s+/)[0]!);
    }
  }
  return names;
}

const docs = [
  'README.md',
  ...readdirSync(path.join(repo, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

test.each(docs)('%s imports from durable-agent only what the package exports', (doc) => {
  const names = importedNames(read(doc));
  const missing = names.filter((name) => !(name in entry));
  expect(missing).toEqual([]);
});

test('docs/output.md shows the typed answer through the package (AgentRun with a zod schema)', () => {
  const names = importedNames(read('docs/output.md'));
  expect(names).toEqual(expect.arrayContaining(['AgentRun']));
});

test('every DurableAgent.* type a run puts in AgentRunResult.error is listed in docs/contracts.md', () => {
  const contracts = read('docs/contracts.md');
  // The registry (ErrorTypes) holds every type the agent raises; test/unit/contracts-doc.test.ts checks
  // that no DurableAgent.* literal in src/ is missing from it.
  const types = Object.values(ErrorTypes).filter((type) => type.startsWith('DurableAgent.'));
  expect(types).toEqual(expect.arrayContaining(['DurableAgent.Interrupted', 'DurableAgent.Cancelled']));
  expect(types.filter((type) => !contracts.includes(`\`${type}\``))).toEqual([]);
});
