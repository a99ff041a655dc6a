// ESLint (flat config): the layer order of docs/architecture.md as import rules, no import cycles, and a small set of
// correctness rules the tree passes. No type-aware rules (they cost a full type check; `tsc --noEmit` runs in `npm test`).
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const DOMAIN_LIBS = [
  'accounts',
  'auth',
  'automations',
  'campaigns',
  'contacts',
  'flows',
  'messaging',
  'templates',
  'whatsapp',
];
const OUR_LIBS = ['core', 'engine', ...DOMAIN_LIBS];

/** `@switchboard/<lib>` and relative paths that climb into libs/<lib> (from anywhere under libs/). */
const libImport = (libs, why) => [
  { regex: `^@switchboard/(${libs.join('|')})(/.*)?$`, message: why },
  { regex: `^(\\.\\./)+(libs/)?(${libs.join('|')})/`, message: why },
];

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', 'coverage/**', '.data/**', 'apps/console/**', '**/*.js', '**/*.cjs'],
  },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.mjs'],
    languageOptions: {
      parser: tseslint.parser,
      ecmaVersion: 2023,
      sourceType: 'module',
    },
    plugins: {
      '@typescript-eslint': tseslint.plugin,
      'import-x': importX,
    },
    settings: {
      'import-x/extensions': ['.ts', '.mts', '.js', '.mjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts', '.mts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      'import-x/internal-regex': '^@switchboard/',
    },
    // directives for rules this config does not enable (e.g. no-explicit-any) are kept for stricter configs
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      // correctness (from eslint:recommended, the ones that catch bugs rather than style)
      'for-direction': 'error',
      'getter-return': 'error',
      'no-async-promise-executor': 'error',
      'no-compare-neg-zero': 'error',
      'no-cond-assign': ['error', 'except-parens'],
      'no-constant-binary-expression': 'error',
      'no-debugger': 'error',
      'no-dupe-else-if': 'error',
      'no-duplicate-case': 'error',
      'no-empty-character-class': 'error',
      'no-empty-pattern': 'error',
      'no-ex-assign': 'error',
      'no-fallthrough': 'error',
      'no-invalid-regexp': 'error',
      'no-loss-of-precision': 'error',
      'no-misleading-character-class': 'error',
      'no-self-assign': 'error',
      'no-self-compare': 'error',
      'no-sparse-arrays': 'error',
      'no-template-curly-in-string': 'off',
      'no-unreachable': 'error',
      'no-unsafe-finally': 'error',
      'no-unsafe-negation': 'error',
      'no-unsafe-optional-chaining': 'error',
      'no-unused-labels': 'error',
      'no-useless-backreference': 'error',
      'use-isnan': 'error',
      'valid-typeof': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-var': 'error',
      'prefer-const': ['error', { destructuring: 'all' }],
      // TypeScript
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'none', caughtErrors: 'none', ignoreRestSiblings: true, varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-duplicate-enum-values': 'error',
      '@typescript-eslint/no-misused-new': 'error',
      '@typescript-eslint/no-unsafe-declaration-merging': 'error',
      '@typescript-eslint/prefer-as-const': 'error',
      '@typescript-eslint/no-non-null-asserted-optional-chain': 'error',
      '@typescript-eslint/consistent-type-imports': 'off',
      // imports
      'import-x/no-cycle': 'error',
      'import-x/no-self-import': 'error',
      'import-x/no-duplicates': 'error',
    },
  },
  {
    // settings from the environment are read once, by libs/core's config (AppConfig); the sandbox (Meta's emulator),
    // operator scripts and tests are separate programs
    files: ['libs/**/*.ts', 'apps/api/**/*.ts', 'apps/worker/**/*.ts', 'apps/admin/**/*.ts', 'workflows/**/*.ts'],
    ignores: ['libs/core/src/config/**', '**/*.spec.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read settings through AppConfig (libs/core/src/config).' },
      ],
    },
  },
  {
    // libs/core is the bottom layer: it knows no domain
    files: ['libs/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: libImport(DOMAIN_LIBS, 'libs/core imports no domain library (docs/architecture.md, layers).') },
      ],
    },
  },
  {
    // libs/engine is the pure interpreter: no Nest, no database, no queue, no other library of ours
    files: ['libs/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...libImport(
              OUR_LIBS,
              'libs/engine imports no other library of ours (pure TypeScript, docs/architecture.md).',
            ),
            {
              regex: '^(@nestjs/.*|typeorm(/.*)?|pg(/.*)?|ioredis|bullmq|@temporalio/.*|undici|fastify)$',
              message: 'libs/engine has no I/O: no Nest, TypeORM, pg, Redis, BullMQ, Temporal or HTTP.',
            },
          ],
        },
      ],
    },
  },
  {
    // the template rules are bundled into the console as well as used by the server: they import nothing
    files: ['libs/templates/src/template-rules.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '.*', message: 'template-rules.ts is shared with the console: it imports nothing.' }] },
      ],
    },
  },
  {
    // Temporal workflow code runs in the workflow sandbox: only @temporalio/workflow and libs/engine
    files: ['workflows/**/*.ts'],
    ignores: ['**/*.spec.ts', 'workflows/bundle.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...libImport(['core', ...DOMAIN_LIBS], 'Workflow code imports only @temporalio/workflow and libs/engine.'),
            {
              regex: '^(@nestjs/.*|typeorm(/.*)?|pg(/.*)?|ioredis|bullmq|undici|fastify|node:.*)$',
              message: 'Workflow code is deterministic: no I/O.',
            },
          ],
        },
      ],
    },
  },
);
