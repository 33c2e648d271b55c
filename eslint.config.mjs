import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const DETERMINISM = 'workflows must be deterministic';
const ONE_OWNER = 'tables are reached only through repositories/ (one repository per aggregate owns its tables)';
const PURE = 'domain/ is pure logic: no database, queue, Temporal, logging, configuration or provider I/O';
const TEMPORAL = 'Temporal client calls live in workflows/client.ts';
const QUEUES = 'queue names and schedules live in workers/queues.ts';

const models = { group: ['**/models', '**/models/*', '!**/models/migrate', '!**/models/migrator'], message: ONE_OWNER };
const dbClients = { group: ['sequelize', 'pg'], message: ONE_OWNER, allowTypeImports: true };
const temporalClient = { group: ['@temporalio/client'], message: TEMPORAL, allowTypeImports: true };
const apiFromBelow = { group: ['**/api', '**/api/**'], message: 'only the api imports the api' };
const activities = {
  group: ['**/workflows/activities', '**/workflows/activities/**'],
  message: "activities are the worker's: shared use cases live in services/",
};
const workerEntries = {
  group: ['**/workers/*', '!**/workers/queues'],
  message: 'the api never imports a worker entry file; queue names are in workers/queues.ts',
};

/** Raw SQL (`.query(`) is a repository's business; migrations keep their own. */
const noRawSql = {
  selector: "CallExpression[callee.property.name='query']",
  message: `raw SQL lives in repositories/: ${ONE_OWNER}`,
};
/**
 * SQL written as a string, outside repositories/ (and the migrations in models/). Upper case only, as the
 * SQL here is written: a message such as "Select a method" is not SQL.
 */
const SQL_START = '/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\\s/';
const noSqlStrings = [
  { selector: `Literal[value=${SQL_START}]`, message: `SQL lives in repositories/: ${ONE_OWNER}` },
  {
    selector: `TemplateLiteral > TemplateElement:first-child[value.raw=${SQL_START}]`,
    message: `SQL lives in repositories/: ${ONE_OWNER}`,
  },
];
/** A queue or worker made with a literal name, or a scheduler upserted with one, bypasses workers/queues.ts. */
const noLiteralQueues = [
  { selector: 'NewExpression[callee.name=/^(Queue|Worker|QueueEvents)$/] > Literal.arguments:first-child', message: QUEUES },
  {
    selector: 'CallExpression[callee.property.name=/^(upsertJobScheduler|removeJobScheduler)$/] > Literal.arguments:first-child',
    message: QUEUES,
  },
];

function restrict(files, patterns, extra = {}) {
  return { files, ...extra, rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

function layerRules() {
  return [
    // Everything outside repositories/ and models/: no models, no raw SQL, no literal queue names.
    {
      files: [
        'api/**/*.ts',
        'services/**/*.ts',
        'workers/**/*.ts',
        'workflows/**/*.ts',
        'connectors/**/*.ts',
        'domain/**/*.ts',
        'platform/**/*.ts',
      ],
      rules: { 'no-restricted-syntax': ['error', noRawSql, ...noSqlStrings, ...noLiteralQueues] },
    },
    { files: ['repositories/**/*.ts', 'models/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...noLiteralQueues] } },
    restrict(['api/**/*.ts'], [models, dbClients, temporalClient, workerEntries, activities]),
    // Use cases sit below every process: the api, the jobs process and the activities call them alike.
    restrict(['services/**/*.ts'], [models, dbClients, temporalClient, apiFromBelow, workerEntries, activities]),
    restrict(['workers/**/*.ts'], [models, dbClients, temporalClient, apiFromBelow, activities], {
      ignores: ['workers/temporal-worker.ts'],
    }),
    restrict(['workers/temporal-worker.ts'], [models, dbClients, temporalClient, apiFromBelow]),
    restrict(
      ['workflows/activities/**/*.ts'],
      [
        models,
        dbClients,
        temporalClient,
        apiFromBelow,
        { group: ['**/workers/**'], message: 'activities do not import worker entry points' },
      ],
    ),
    restrict(
      ['connectors/**/*.ts'],
      [
        models,
        dbClients,
        temporalClient,
        apiFromBelow,
        { group: ['**/workers/**', '**/workflows/**'], message: 'connectors are adapters below the workflows' },
        { group: ['**/repositories/**'], message: 'a connector is a pure adapter: it is given what it needs and writes nothing of ours' },
      ],
    ),
    restrict(
      ['repositories/**/*.ts'],
      [
        temporalClient,
        apiFromBelow,
        { group: ['**/workers/**', '**/workflows/**', '**/connectors/**'], message: 'repositories sit just above the models' },
      ],
    ),
    restrict(
      ['models/**/*.ts'],
      [
        temporalClient,
        apiFromBelow,
        {
          group: ['**/workers/**', '**/workflows/**', '**/connectors/**', '**/repositories/**'],
          message: 'models are the bottom layer; their enums and types come from domain/',
        },
      ],
    ),
    restrict(
      ['platform/**/*.ts'],
      [
        models,
        apiFromBelow,
        {
          group: ['**/workers/**', '**/workflows/**', '**/connectors/**', '**/repositories/**', '**/domain/**', '!**/domain/money'],
          message: 'platform/ is infrastructure, below every layer',
        },
      ],
    ),
    restrict(
      ['workflows/client.ts'],
      [models, dbClients, apiFromBelow, { group: ['**/workers/**'], message: 'the client does not import worker entry points' }],
    ),
    restrict(
      ['domain/**/*.ts'],
      [
        models,
        {
          group: ['sequelize', 'pg', 'ioredis', 'bullmq', '@temporalio/*', 'ccxt'],
          message: PURE,
        },
        { group: ['**/repositories/**', '**/connectors/**', '**/api/**', '**/workers/**', '**/workflows/**'], message: PURE },
        {
          group: ['**/platform/database', '**/platform/redis', '**/platform/temporal', '**/platform/logger', '**/platform/shutdown'],
          message: PURE,
        },
        { group: ['**/platform/config'], message: PURE, allowTypeImports: true },
      ],
    ),
    // Workflow code must be deterministic: no I/O, no Node built-ins, no database or queue clients.
    restrict(
      ['workflows/**/*.ts'],
      [
        { group: ['node:*', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process', 'os'], message: DETERMINISM },
        {
          group: [
            'sequelize',
            'pg',
            'bullmq',
            'ioredis',
            '**/models',
            '**/models/**',
            '**/platform/**',
            '**/repositories/**',
            '**/connectors/**',
          ],
          message: DETERMINISM,
        },
        { group: ['./activities', './activities/*'], message: 'import activities with `import type` only', allowTypeImports: true },
      ],
      { ignores: ['workflows/activities/**', 'workflows/client.ts'] },
    ),
  ];
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'api/generated/**',
      '.tools/**',
      '.data/**',
      'scripts/**',
      'bench/results/**',
      'examples/**/paygate-api.ts',
      'examples/**/out/**',
    ],
  },
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
  // The layers import downward only: controllers → services → workflows/activities → repositories → models.
  // Each folder's restrictions are one rule object (flat config does not merge a rule's options).
  ...layerRules(),
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
  // The merchant example compiles against a client generated from a running server's description
  // (paygate-api.ts, not committed): its types are checked where it is built, in tests/generated-client.test.ts.
  { files: ['examples/**/*.ts'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
