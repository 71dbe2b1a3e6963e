// @ts-check
/**
 * The layers of src/, enforced (docs/contributing.md, "Layers").
 *
 * - `import-x/no-cycle`: no module imports itself through others. Type-only imports do not count (they
 *   are erased); folder cycles are checked by test/unit/layers.test.ts.
 * - `@typescript-eslint/no-restricted-imports`: what each zone of src/ may import, and how.
 *
 * ESLint applies one set of options per rule to a file (a later config object replaces an earlier
 * one), so the zones are disjoint and each carries every restriction that applies to it. A folder is
 * matched by the relative path that reaches it from the importing file (`../../tools/x` from
 * src/workflows/run/), so `src/shared/mcp.ts` is not mistaken for the `src/mcp/` folder: each zone is
 * expanded into one config object per folder depth.
 */
import { builtinModules } from 'node:module';
import { importX } from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** The folders of src/ whose code runs in Node only (on the worker or in a client). */
const NODE_ONLY = [
  'activities',
  'admission',
  'agents',
  'checkpoints',
  'cli',
  'client',
  'codec',
  'context',
  'hooks',
  'inspector',
  'mcp',
  'models',
  'plugin',
  'safe-fs',
  'sandbox',
  'server',
  'telemetry',
  'tools',
  'worker',
];

/**
 * A regex for an import of one of `names` (a folder or a module) in `base` (a folder of src/, '' for
 * src/ itself), from a file `depth` folders below src/.
 */
function reaching(depth, base, names) {
  const baseDepth = base ? base.split('/').length : 0;
  const up = depth - baseDepth;
  const prefix = up === 0 ? '\\./' : '(\\.\\./)'.repeat(up);
  return `^${prefix}(${names.join('|')})(/|$)`;
}

/**
 * Hot code imports a shared module itself (`../../shared/constants`, `../../shared/run/tool-policy`),
 * not the `src/shared` or `src/shared/run` barrel: TypeScript compiles their re-exports to getters, one
 * call per access (docs/contributing.md, "The hot path").
 */
const SHARED_BARREL = () => ({
  patterns: [
    {
      regex: '^\\.{1,2}/(\\.\\./)*shared(/run)?(/index)?(\\.[cm]?[jt]s)?/?$',
      allowTypeImports: true,
      message:
        "Import the shared module itself (e.g. '../../shared/constants'), not a barrel: its re-exports are getters.",
    },
  ],
});

/** Workflow code runs in Temporal's deterministic sandbox: no Node built-ins. */
const NO_NODE_BUILTINS = () => ({
  paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code cannot use Node built-ins.' })),
});

/** Workflow code imports the packages that are safe in the sandbox only: the SDK's workflow side and zod. */
const WORKFLOW_PACKAGES = () => ({
  patterns: [
    {
      regex: '^(?![./])(?!(@temporalio/workflow|@temporalio/common|zod)$)',
      message:
        'Workflow code imports only @temporalio/workflow, @temporalio/common, zod, src/shared and workflow code.',
    },
  ],
});

/** Workflow code sees the worker's code as types only (`proxyActivities<Activities>`). */
const NODE_ONLY_AS_TYPES = (depth) => ({
  patterns: [
    {
      regex: reaching(depth, '', NODE_ONLY),
      allowTypeImports: true,
      message: "Workflow code may import the worker's and the clients' folders only as types.",
    },
  ],
});

/** Only the call modules (src/workflows/calls/) schedule activities or child workflows. */
const SCHEDULES_IN_CALLS = (depth) => ({
  paths: [
    {
      name: '@temporalio/workflow',
      importNames: ['proxyActivities', 'proxyLocalActivities', 'startChild', 'executeChild'],
      message: 'Only the call modules (src/workflows/calls/) schedule activities or child workflows.',
    },
  ],
  patterns: [
    {
      regex: reaching(depth, 'workflows', ['calls/activity-proxy']),
      allowTypeImports: true,
      message: 'Only the call modules (src/workflows/calls/) schedule activities.',
    },
  ],
});

/**
 * The run's state (src/workflows/run/) is the bottom of the workflow code: it imports src/shared, the
 * SDK workarounds (src/workflows/sdk/) and itself; the rest of the workflow code only as types.
 */
const RUN_STATE = (depth) => ({
  patterns: [
    {
      regex: reaching(depth, 'workflows', [
        'calls',
        'steps',
        'subagents',
        'loop',
        'handlers',
        'agent-workflow',
        'index',
      ]),
      allowTypeImports: true,
      message:
        "The run's state imports src/shared and src/workflows/sdk; the calls, steps and subagents only as types.",
    },
  ],
});

/** src/shared is what the workflow and every client share: it imports nothing outside itself. */
const SHARED_STANDS_ALONE = (depth) => ({
  patterns: [
    {
      regex: `^(\\.\\./){${depth}}(?!shared(/|$))`,
      message: 'src/shared imports nothing outside src/shared (no worker, client or workflow code).',
    },
  ],
});

/** The CLI is a client of the library, never the reverse. */
const NOT_THE_CLI = (depth) => ({
  patterns: [
    {
      regex: reaching(depth, '', ['cli']),
      message: 'The CLI is a client of the library: the library never imports it.',
    },
  ],
});

/**
 * Files that do not keep one restriction of their zone yet, and why. Each names the work that
 * removes it; the list only shrinks.
 */
const PENDING = [
  {
    files: ['src/workflows/subagents/definitions.ts', 'src/workflows/subagents/tree.ts'],
    spared: SCHEDULES_IN_CALLS,
    why: 'the subagents start their children and call their activities themselves (issue 40, item 3)',
  },
  {
    files: ['src/workflows/run/run.ts'],
    spared: RUN_STATE,
    why: 'Run builds its callers itself until it takes them as an argument (issue 40, item 3)',
  },
  {
    files: ['actions', 'build-view', 'live-hub', 'run-list', 'server'].map((name) => `src/inspector/${name}.ts`),
    spared: NOT_THE_CLI,
    why: "the inspector reuses the CLI's steering, listing and error messages (issue 42, the ui command)",
  },
];

/** [folder, folders beneath it that are zones of their own, restrictions]: disjoint zones covering src/. */
const ZONES = [
  ['src/shared', [], [NO_NODE_BUILTINS, WORKFLOW_PACKAGES, SHARED_STANDS_ALONE, SHARED_BARREL]],
  ['src/workflows/calls', [], [NO_NODE_BUILTINS, WORKFLOW_PACKAGES, NODE_ONLY_AS_TYPES, NOT_THE_CLI, SHARED_BARREL]],
  [
    'src/workflows/run',
    [],
    [
      NO_NODE_BUILTINS,
      WORKFLOW_PACKAGES,
      NODE_ONLY_AS_TYPES,
      NOT_THE_CLI,
      SCHEDULES_IN_CALLS,
      RUN_STATE,
      SHARED_BARREL,
    ],
  ],
  [
    'src/workflows',
    ['src/workflows/calls', 'src/workflows/run'],
    [NO_NODE_BUILTINS, WORKFLOW_PACKAGES, NODE_ONLY_AS_TYPES, NOT_THE_CLI, SCHEDULES_IN_CALLS, SHARED_BARREL],
  ],
  // The activities are the worker's hot path too.
  ['src/activities', [], [NOT_THE_CLI, SHARED_BARREL]],
  ['src', ['src/shared', 'src/workflows', 'src/activities', 'src/cli'], [NOT_THE_CLI]],
];

/** Deepest folder under a zone's root that holds code (src/cli/transcript/x.ts is 2 below src/). */
const MAX_NESTING = 4;

function zoneConfigs() {
  const pendingFiles = PENDING.flatMap((p) => p.files);
  return ZONES.flatMap(([root, subzones, parts]) => {
    const rootDepth = root.split('/').length - 1;
    const ignores = subzones.map((z) => `${z}/**`);
    const inZone = (file) => file.startsWith(`${root}/`) && !subzones.some((z) => file.startsWith(`${z}/`));
    return Array.from({ length: MAX_NESTING }, (_, extra) => {
      const depth = rootDepth + extra;
      const files = [`${root}/${'*/'.repeat(extra)}*.ts`];
      const rule = (list) => ({
        '@typescript-eslint/no-restricted-imports': [
          'error',
          {
            paths: list.flatMap((part) => part(depth).paths ?? []),
            patterns: list.flatMap((part) => part(depth).patterns ?? []),
          },
        ],
      });
      const atDepth = (file) => inZone(file) && file.split('/').length - 2 === depth;
      return [
        { files, ignores: [...ignores, ...pendingFiles], rules: rule(parts) },
        // A pending file keeps every other restriction of its zone.
        ...PENDING.map((p) => ({
          files: p.files.filter(atDepth),
          rules: rule(parts.filter((part) => part !== p.spared)),
        })).filter((c) => c.files.length > 0),
      ];
    }).flat();
  });
}

/** The config objects: the import resolver, the cycle rule and the zones. */
export function layers(tsconfigRootDir) {
  return [
    {
      files: ['src/**/*.ts'],
      plugins: { 'import-x': importX },
      settings: {
        'import-x/extensions': ['.ts', '.js'],
        'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
        'import-x/resolver-next': [createTypeScriptImportResolver({ project: `${tsconfigRootDir}/tsconfig.json` })],
      },
      rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
    },
    ...zoneConfigs(),
  ];
}
