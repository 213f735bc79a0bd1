// Unit tests live beside the code (libs/**, apps/**); end-to-end tests live in test/ and talk to
// real NATS, Redis and SQLite.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
  },
];
const moduleNameMapper = {
  '^@app/engine(|/.*)$': '<rootDir>/libs/engine/src$1',
  '^@app/contracts(|/.*)$': '<rootDir>/libs/contracts/src$1',
  '^@app/logging(|/.*)$': '<rootDir>/libs/logging/src$1',
  '^@app/nats-connection(|/.*)$': '<rootDir>/libs/nats-connection/src$1',
  '^@app/client(|/.*)$': '<rootDir>/libs/client/src$1',
  // Examples import the client as users do, by its package name.
  '^@ratelimit/client(|/.*)$': '<rootDir>/libs/client/src$1',
};
// Node's environment, which also kills (and reports) child processes a test file left running.
const testEnvironment = '<rootDir>/test/support/process-environment.ts';
const common = { transform: { '^.+\\.ts$': swc }, moduleNameMapper, testEnvironment };
module.exports = {
  // Two suites at a time on the 2-core machines the tests run on (Jest's default there is one):
  // most e2e time is spent waiting on child processes, windows and timers, not on a core.
  maxWorkers: 2,
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/libs', '<rootDir>/apps'],
      testMatch: ['**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts', '**/*.spec.ts'],
    },
  ],
};
