// ESLint (flat config): typescript-eslint's type-checked recommended rules on apps/, libs/ and
// test/, with Prettier owning the layout (eslint-config-prettier turns off the rules it decides).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'libs/*/dist/**', 'node_modules/**', 'bench/**', 'scripts/**', 'coverage/**', '**/*.mjs', '**/*.cjs', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    // Tests assert on response bodies, which supertest types as `any`: what they read is checked by
    // the assertions themselves (and every e2e response against the OpenAPI documents).
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  prettier,
);
