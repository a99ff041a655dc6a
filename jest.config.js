// Nest 12 and a few of its dependencies ship ES modules only; jest (unlike Node 20.19+) cannot
// require() them, so everything, node_modules included, goes through SWC to CommonJS (cached).
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
  },
];

const moduleNameMapper = {
  // the template rules the console bundles (apps/console/vite.config.mts has the same alias)
  '^@switchboard/template-rules$': '<rootDir>/libs/templates/src/template-rules.ts',
  '^@switchboard/([a-z-]+)$': '<rootDir>/libs/$1/src',
  '^@switchboard/core/(.*)$': '<rootDir>/libs/core/src/$1',
};
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j|mj|cj)s$': swc },
  transformIgnorePatterns: [],
  moduleNameMapper,
};

module.exports = {
  watchman: false,
  testTimeout: 30000,
  // Two test files at once (jest's default on 2 cores is one): every e2e file has its own database (cloned from the
  // template), Redis key prefix, ports and Temporal task queue, and most of its time is spent waiting (paced sends,
  // locks to expire, child processes), so two files overlap well: the four slowest files took 189 s one after the
  // other and 119 s two at a time.
  maxWorkers: 2,
  // Test files run in a worker process that is replaced once it holds more than this after a file: in band (one
  // process for all files) the heap grew with every file's app and the run died out of memory near its end.
  workerIdleMemoryLimit: '1GB',
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,libs,workflows}/**/*.spec.ts', '<rootDir>/test/architecture/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/pg-guard.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
    {
      // The live Temporal suite: the same global setup starts one Temporal dev server for the whole run
      // (scripts/temporal-server.ts); the e2e automation suites run on both drivers against it too.
      ...common,
      displayName: 'temporal',
      testMatch: ['<rootDir>/test/temporal/**/*.live-spec.ts'],
      testTimeout: 120000,
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
  ],
};
