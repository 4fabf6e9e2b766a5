/**
 * Two tiers: `unit` (pure logic, no database) and `e2e` (the real apps on a real PostgreSQL:
 * TEST_DATABASE_URL, else an embedded one started once in globalSetup).
 *
 * The tests are TypeScript compiled to CommonJS by ts-jest (as `nest build` compiles the apps).
 * NestJS 12 and some of its neighbours ship as ES modules only. Node loads them from CommonJS
 * with require(esm), but Jest runs modules in its own loader, which can do that only on Node
 * 24.9+ with --experimental-vm-modules; on the Node 20.19+ / 22 lines the product also
 * supports, it cannot. So Jest compiles exactly those packages to CommonJS with Babel
 * (`import.meta` included) and caches the result: one loader on every supported Node line.
 */
const swaggerPlugin = { path: '<rootDir>/test/support/swagger-transformer.js' };

/** Packages published as ES modules only, that tests load (directly or through the apps). */
const ESM_ONLY = ['@nestjs', 'jose', 'eventsource-parser'];

const common = {
  moduleFileExtensions: ['js', 'json', 'ts'],
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: 'tsconfig.json',
        isolatedModules: false,
        astTransformers: { before: [swaggerPlugin] },
        // tsconfig.json says module "nodenext" (what Nest 12 asks for, so that TypeScript resolves
        // the ESM-only packages' types as Node does); ts-jest emits CommonJS for the tests either
        // way, which is what its warning 151002 is about.
        diagnostics: { ignoreCodes: [151002] },
      },
    ],
    '^.+\\.js$': [
      'babel-jest',
      {
        babelrc: false,
        configFile: false,
        plugins: [
          require.resolve('./test/support/babel-esm-to-commonjs.js'),
          'babel-plugin-transform-import-meta',
          '@babel/plugin-transform-dynamic-import',
          '@babel/plugin-transform-modules-commonjs',
        ],
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  moduleNameMapper: {
    // libs/client is also an ES module package (libs/client/build.mjs): its relative imports name
    // the .js files the build emits, which are the .ts sources here.
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@app/domain(|/.*)$': '<rootDir>/libs/domain/src$1',
    '^@app/platform(|/.*)$': '<rootDir>/libs/platform/src$1',
    '^@app/client$': '<rootDir>/libs/client/src',
  },
};
module.exports = {
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
