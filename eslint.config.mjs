// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layers } from './eslint/layers.mjs';

/**
 * Workflow code is evaluated once per workflow thread and shared by every run on it
 * (src/workflow-bundle-options.ts, `AGENT_WORKFLOWS_MODULE`): state at module level would be shared
 * by those runs, and replay would see what another run left there. A run's state lives in the objects
 * its `agentWorkflow` call creates (docs/contributing.md, "Module state").
 */
const MODULE_STATE = 'Module-level state is shared by every run on a workflow thread: keep it in the run.';
/** A collection made to be filled later: `new Map()` and its kin, `Object.create()`, `[]`, `{}`. */
const EMPTY_COLLECTIONS = [
  'NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet|Array|Object)$/]',
  "CallExpression[callee.object.name='Object'][callee.property.name='create']",
  'ArrayExpression[elements.length=0]',
  'ObjectExpression[properties.length=0]',
];
const declarators = [
  'Program > VariableDeclaration > VariableDeclarator',
  'Program > ExportNamedDeclaration > VariableDeclaration > VariableDeclarator',
];
const NO_MODULE_STATE = [
  ...['Program > VariableDeclaration', 'Program > ExportNamedDeclaration > VariableDeclaration'].map((at) => ({
    selector: `${at}[kind!='const']`,
    message: MODULE_STATE,
  })),
  // The collection itself, or cast (`[] as T[]`, `new Map() satisfies …`).
  ...declarators
    .flatMap((declarator) =>
      EMPTY_COLLECTIONS.flatMap((collection) => [
        `${declarator} > ${collection}.init`,
        `${declarator} > TSAsExpression.init > ${collection}.expression`,
        `${declarator} > TSSatisfiesExpression.init > ${collection}.expression`,
      ]),
    )
    .map((selector) => ({ selector, message: MODULE_STATE })),
  { selector: 'PropertyDefinition[static=true]', message: MODULE_STATE },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bin/**',
      'scripts/*.mjs',
      'eslint.config.mjs',
      'eslint/**',
      'jest.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A forgotten await in a workflow is a bug that replays silently wrong.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // Which folder may import which (docs/contributing.md, "Layers").
  ...layers(import.meta.dirname),
  {
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...NO_MODULE_STATE] },
  },
  {
    // The inspector's page (src/inspector/web/): plain browser modules, no build step, no type information.
    files: ['src/inspector/web/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      parserOptions: { projectService: false },
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'fetch',
          'EventSource',
          'URL',
          'URLSearchParams',
          'Node',
          'setTimeout',
          'clearTimeout',
          'performance',
        ].map((name) => [name, 'readonly']),
      ),
    },
    rules: { '@typescript-eslint/no-floating-promises': 'off' },
  },
);
