import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

/**
 * What `npm run build` puts into dist/: the apps' and the lib's sources, never a test file
 * (`*.spec.ts`, test/) and never a test snapshot (the committed `test/sql-snapshots/<app>/*.sql` the SQL
 * snapshot tests compare with). Read from the same tsconfig files and nest-cli.json that `nest build` reads.
 */
const ROOT = join(__dirname, '../..');
const TSCONFIGS = ['apps/objects/tsconfig.app.json', 'apps/object-sets/tsconfig.app.json', 'libs/domain/tsconfig.lib.json', 'libs/platform/tsconfig.lib.json'];

function compiledFiles(tsconfig: string): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, tsconfig), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!parsed) throw new Error(`cannot read ${tsconfig}`);
  return parsed.fileNames.map((f) => relative(ROOT, f));
}

function sqlFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sqlFiles(path, out);
    else if (entry.name.endsWith('.sql')) out.push(path);
  }
  return out;
}

describe('npm run build compiles the product only', () => {
  it.each(TSCONFIGS)('%s compiles no test file', (tsconfig) => {
    const files = compiledFiles(tsconfig);
    expect(files.length).toBeGreaterThan(20);
    expect(files.filter((f) => /\.(e2e-)?spec\.ts$/.test(f) || f.startsWith('test/'))).toEqual([]);
  });

  it('copies no SQL snapshot into dist/ (they live in test/sql-snapshots, and nest-cli.json declares no .sql asset)', () => {
    expect(sqlFiles('test/sql-snapshots').length).toBeGreaterThan(0);
    expect([...sqlFiles('apps'), ...sqlFiles('libs')]).toEqual([]);
    const nest = JSON.parse(readFileSync(join(ROOT, 'nest-cli.json'), 'utf8')) as {
      compilerOptions?: { assets?: unknown[] };
      projects: Record<string, { compilerOptions?: { assets?: unknown[] } }>;
    };
    const assets = [nest.compilerOptions?.assets ?? [], ...Object.values(nest.projects).map((p) => p.compilerOptions?.assets ?? [])].flat();
    expect(assets.filter((a) => JSON.stringify(a).includes('sql'))).toEqual([]);
  });
});
