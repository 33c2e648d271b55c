import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'api/generated/**', '.tools/**', '.data/**', 'scripts/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/only-throw-error': 'off',
    },
  },
  {
    // Workflow code must be deterministic: no I/O, no Node built-ins, no database or queue clients.
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/activities/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process', 'os'],
              message: 'workflows must be deterministic',
            },
            {
              group: ['sequelize', 'pg', 'bullmq', 'ioredis', '**/models', '**/models/**', '**/platform/**'],
              message: 'workflows must be deterministic',
            },
            { group: ['./activities', './activities/*'], message: 'import activities with `import type` only', allowTypeImports: true },
          ],
        },
      ],
    },
  },
  {
    // The console runs in the browser (console/tsconfig.json has the DOM library).
    files: ['console/**/*.ts'],
    languageOptions: {
      globals: { window: 'readonly', document: 'readonly', fetch: 'readonly', sessionStorage: 'readonly', crypto: 'readonly' },
    },
  },
  {
    files: ['tests/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['**/*.mjs', '**/*.js'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
