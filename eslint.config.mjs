// ESLint (flat config): typescript-eslint's type-checked recommended rules on apps/, libs/ and
// test/, with Prettier owning the layout (eslint-config-prettier turns off the rules it decides).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/client/sdk/*.mts compiles beside an SDK generated at test time (test/client/sdk-types.spec.ts), not in this project.
  { ignores: ['dist/**', 'libs/*/dist/**', 'node_modules/**', 'bench/**', 'scripts/**', 'coverage/**', '**/*.mjs', '**/*.cjs', '**/*.js', 'test/client/sdk/*.mts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A name that starts with `_` is unused on purpose: a parameter an interface gives, or a key left out of a rest.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests assert on response bodies, which supertest types as `any` (and the tests' own HTTP helpers
    // type them alike): what they read is checked by the assertions themselves (and every e2e
    // response against the OpenAPI documents).
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Fakes of the apps' services keep their async signatures without anything to await.
      '@typescript-eslint/require-await': 'off',
      // Tests hand handlers over as values (Reflector metadata, stubs) without calling them unbound.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
