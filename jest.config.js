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
  reporters: ['default', '<rootDir>/test/helpers/summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs,workflows}/**/*.spec.ts', '<rootDir>/test/architecture/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/pg-guard.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
  ],
};

// The live Temporal suite (test/temporal/*.live-spec.ts) is not part of `npm test`: its project exists only when
// selected (`npm run test:temporal` = `jest --selectProjects temporal`), and it skips itself without TEMPORAL_ADDRESS.
if (process.argv.some((arg) => arg === 'temporal' || arg === '--selectProjects=temporal')) {
  module.exports.projects.push({
    ...common,
    displayName: 'temporal',
    testMatch: ['<rootDir>/test/temporal/**/*.live-spec.ts'],
    testTimeout: 120000,
    // The app-driven part of the live suite boots the real API + worker (Postgres, Redis); only with a server.
    ...(process.env.TEMPORAL_ADDRESS
      ? { globalSetup: '<rootDir>/test/helpers/global-setup.ts', globalTeardown: '<rootDir>/test/helpers/global-teardown.ts' }
      : {}),
  });
}
