/**
 * Two tiers: `unit` (pure logic, no database) and `e2e` (the real apps on a real PostgreSQL:
 * TEST_DATABASE_URL, else an embedded one started once in globalSetup).
 */
const swaggerPlugin = { path: '<rootDir>/test/support/swagger-transformer.js' };
const common = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: false, astTransformers: { before: [swaggerPlugin] } }],
  },
  moduleNameMapper: {
    '^@app/domain(|/.*)$': '<rootDir>/libs/domain/src$1',
  },
};
module.exports = {
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
