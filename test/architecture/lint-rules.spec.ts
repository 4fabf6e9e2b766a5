import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths';

/**
 * `npm run lint` (CI's first step after npm ci) runs ESLint with typescript-eslint's type-checked
 * rules over apps/, libs/ and test/. This checks that the rules that catch a promise nobody waits
 * for are there and fire, in product code and in tests alike: a floating promise fails the build.
 *
 * ESLint runs in a child process: it loads eslint.config.mjs with a native import(), which Jest's
 * module loader does not offer.
 */
const FLOATING = `
export async function later(): Promise<void> {}
export function floats(): void {
  later();
}
export function misused(xs: number[]): void {
  xs.forEach(async () => {
    await later();
  });
}
export async function awaited(): Promise<void> {
  await later();
  void later().catch(() => undefined);
}
`;

/** The rule ids ESLint reports for FLOATING linted in place of each of `paths` (files of the project, so that type information applies). */
function lint(paths: string[]): Record<string, string[]> {
  const script = `
    const { ESLint } = require('eslint');
    (async () => {
      const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
      const out = {};
      for (const path of ${JSON.stringify(paths)}) {
        const [result] = await eslint.lintText(${JSON.stringify(FLOATING)}, { filePath: path });
        out[path] = result.messages.map((m) => m.ruleId ?? m.message);
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const child = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  if (child.status !== 0) throw new Error(`eslint failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as Record<string, string[]>;
}

describe('ESLint (npm run lint)', () => {
  it('fails a floating promise and a promise handed where nothing awaits it, in apps, libs and tests', () => {
    const paths = ['apps/objects/src/main.ts', 'libs/platform/src/index.ts', 'test/support/clock.ts'];
    const found = lint(paths);
    for (const path of paths) {
      expect({ path, rules: found[path] }).toEqual({
        path,
        rules: ['@typescript-eslint/no-floating-promises', '@typescript-eslint/no-misused-promises'],
      });
    }
  });

  it('is part of npm run lint', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.lint.split('&&').map((s) => s.trim().split(' ')[0])).toEqual(expect.arrayContaining(['tsc', 'eslint']));
  });
});
