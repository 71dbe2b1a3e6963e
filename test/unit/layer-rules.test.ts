import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

/**
 * The layer rules of lint (eslint/layers.mjs, docs/contributing.md "Layers") reject what they say
 * and let the rest through: each case lints one line as if it were a file of src/ and lists the rules
 * that fired. The linting runs in a child Node process, since the rules are an ES module and ESLint
 * loads its plugins with `import()`.
 */

const ROOT = path.join(__dirname, '../..');

interface Case {
  file: string;
  code: string;
}

function rulesFired(cases: Case[]): string[][] {
  const script = `
    import { ESLint } from 'eslint';
    import tseslint from 'typescript-eslint';
    import { layers } from './eslint/layers.mjs';
    const eslint = new ESLint({
      cwd: process.cwd(),
      overrideConfigFile: true,
      overrideConfig: [
        { files: ['**/*.ts'], plugins: { '@typescript-eslint': tseslint.plugin }, languageOptions: { parser: tseslint.parser } },
        ...layers(process.cwd()),
      ],
    });
    const cases = JSON.parse(process.argv[1]);
    const fired = [];
    for (const c of cases) {
      const [result] = await eslint.lintText(c.code, { filePath: c.file });
      fired.push(result.messages.map((m) => m.ruleId ?? m.message));
    }
    console.log(JSON.stringify(fired));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(cases)], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(out) as string[][];
}

const RESTRICTED = '@typescript-eslint/no-restricted-imports';

const cases: Array<Case & { fires: boolean; why: string }> = [
  // src/shared imports nothing outside itself, not even types.
  { file: 'src/shared/x.ts', code: "import { a } from '../tools/registry';", fires: true, why: 'shared → tools' },
  { file: 'src/shared/x.ts', code: "import type { A } from '../activities';", fires: true, why: 'shared → types' },
  { file: 'src/shared/run/x.ts', code: "import { a } from '../mcp';", fires: false, why: 'shared/run → shared/mcp' },
  { file: 'src/shared/run/x.ts', code: "import { a } from '../../mcp/config';", fires: true, why: 'shared → mcp' },
  { file: 'src/shared/x.ts', code: "import { z } from 'zod';", fires: false, why: 'zod is workflow-safe' },
  // Workflow code: the sandbox's packages, the worker's folders as types only.
  { file: 'src/workflows/steps/x.ts', code: "import * as fs from 'node:fs';", fires: true, why: 'Node built-in' },
  { file: 'src/workflows/steps/x.ts', code: "import OpenAI from 'openai';", fires: true, why: 'worker package' },
  {
    file: 'src/workflows/calls/x.ts',
    code: "import type { Activities } from '../../activities';",
    fires: false,
    why: 'activities as types',
  },
  {
    file: 'src/workflows/calls/x.ts',
    code: "import { createActivities } from '../../activities';",
    fires: true,
    why: 'activities as values',
  },
  // Only the call modules schedule activities or children.
  {
    file: 'src/workflows/calls/x.ts',
    code: "import { proxyActivities } from '@temporalio/workflow';",
    fires: false,
    why: 'calls schedule',
  },
  {
    file: 'src/workflows/steps/x.ts',
    code: "import { proxyActivities } from '@temporalio/workflow';",
    fires: true,
    why: 'a step schedules',
  },
  {
    file: 'src/workflows/steps/x.ts',
    code: "import { startChild } from '@temporalio/workflow';",
    fires: true,
    why: 'a step starts a child',
  },
  {
    file: 'src/workflows/steps/x.ts',
    code: "import { condition } from '@temporalio/workflow';",
    fires: false,
    why: 'the rest of the SDK',
  },
  {
    file: 'src/workflows/steps/x.ts',
    code: "import { agentActivities } from '../calls/activity-proxy';",
    fires: true,
    why: 'the activity proxy outside calls',
  },
  // The run's state is the bottom of the workflow code.
  { file: 'src/workflows/run/x.ts', code: "import { f } from '../steps/turn';", fires: true, why: 'run → steps' },
  {
    file: 'src/workflows/run/x.ts',
    code: "import type { ModelCalls } from '../calls/model-calls';",
    fires: false,
    why: 'run → calls as types',
  },
  { file: 'src/workflows/run/x.ts', code: "import { f } from '../sdk/input-order';", fires: false, why: 'run → sdk' },
  // The CLI is a client of the library, never the reverse.
  { file: 'src/plugin/x.ts', code: "import { f } from '../cli/format';", fires: true, why: 'plugin → cli' },
  { file: 'src/x.ts', code: "import { main } from './cli/main';", fires: true, why: 'a top file → cli' },
  { file: 'src/cli/transcript/x.ts', code: "import { f } from '../format';", fires: false, why: 'cli → cli' },
  { file: 'src/cli/x.ts', code: "import { AgentPlugin } from '../plugin';", fires: false, why: 'cli → library' },
  // Hot code imports shared modules themselves.
  {
    file: 'src/activities/x.ts',
    code: "import { DEFAULTS } from '../shared/run';",
    fires: true,
    why: 'the shared/run barrel',
  },
];

test('the layer rules reject what crosses a layer and let the rest through', () => {
  const fired = rulesFired(cases);
  const got = cases.map((c, i) => ({ why: c.why, fires: fired[i]!.includes(RESTRICTED) }));
  expect(got).toEqual(cases.map((c) => ({ why: c.why, fires: c.fires })));
  // Nothing else fired: no parse error or unknown rule behind a pass.
  expect(fired.flat().filter((rule) => rule !== RESTRICTED)).toEqual([]);
});
