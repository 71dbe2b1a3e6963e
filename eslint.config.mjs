// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/**
 * Hot code imports a shared module itself (`../../shared/constants`), not the `src/shared` barrel:
 * TypeScript compiles its re-exports to getters, one call per access (docs/contributing.md, "The hot path").
 */
const SHARED_BARREL = {
  regex: '^\\.{1,2}/(\\.\\./)*shared(/index)?(\\.[cm]?[jt]s)?/?$',
  allowTypeImports: true,
  message:
    "Import the shared module itself (e.g. '../../shared/constants'), not the barrel: its re-exports are getters.",
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bin/**',
      'scripts/*.mjs',
      'eslint.config.mjs',
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
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no worker-only packages.
    files: ['src/workflows/**/*.ts', 'src/shared/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflow code cannot use Node built-ins.' })),
          patterns: [
            {
              group: ['@anthropic-ai/*', '@temporalio/activity', '@temporalio/client', '@temporalio/worker'],
              message: 'Worker-only package: not allowed in the workflow sandbox.',
            },
            {
              group: [
                '**/activities',
                '**/activities/*',
                '**/models',
                '**/models/*',
                '**/tools',
                '**/tools/*',
                '**/sandbox',
                '**/sandbox/*',
                '**/safe-fs',
                '**/safe-fs/*',
              ],
              allowTypeImports: true,
              message: 'Workflow code may import activities, models, tools, the sandbox and safe-fs only as types.',
            },
            SHARED_BARREL,
          ],
        },
      ],
    },
  },
  {
    // The activities are the worker's hot path too.
    files: ['src/activities/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [SHARED_BARREL] }] },
  },
);
