import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * When `npm start` builds (scripts/lib/build.mjs): only when what the build reads changed since
 * the stamp of the last build, or an app's entry point is missing. Run on a small tree of fake
 * sources; the module is an ES module, so each check runs in a child node process.
 */
const MODULE = pathToFileURL(join(__dirname, 'build.mjs')).href;

function run(root: string, expression: string): unknown {
  const code = `const b = await import(${JSON.stringify(MODULE)}); console.log(JSON.stringify(${expression}(${JSON.stringify(root)}) ?? null));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' }));
}

describe('npm start builds only when the sources changed', () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const stale = () => run(root, 'b.staleBuild');
  /** What a successful build leaves: both entry points and the stamp of these sources. */
  const built = () => {
    write('dist/apps/objects/apps/objects/src/main.js', '');
    write('dist/apps/object-sets/apps/object-sets/src/main.js', '');
    write('dist/.build-stamp', `${run(root, 'b.sourceHash') as string}\n`);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'build-stamp-'));
    write('apps/objects/src/main.ts', 'main');
    write('apps/objects/src/object-reads/objects.service.ts', 'service');
    write('apps/objects/src/object-reads/objects.service.spec.ts', 'a unit test');
    write('libs/domain/src/index.ts', 'lib');
    write('tsconfig.json', '{}');
    write('tsconfig.build.json', '{}');
    write('nest-cli.json', '{}');
    write('package-lock.json', '{"lockfileVersion": 3}');
    write('package.json', '{}');
    write('README.md', 'docs');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds when there is no build yet, or no stamp of one', () => {
    expect(stale()).toBe('dist/apps/objects/apps/objects/src/main.js is missing');
    write('dist/apps/objects/apps/objects/src/main.js', '');
    write('dist/apps/object-sets/apps/object-sets/src/main.js', '');
    expect(stale()).toBe('dist/ has no build stamp');
  });

  it('does not build again while the sources stay the same, even when their files are touched', () => {
    built();
    expect(stale()).toBeNull();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'apps/objects/src/main.ts'), later, later);
    expect(stale()).toBeNull();
  });

  it('builds again when a source, a compiler setting or the lock file changes', () => {
    for (const [path, text] of [
      ['apps/objects/src/object-reads/objects.service.ts', 'service, changed'],
      ['libs/domain/src/new-file.ts', 'a new file'],
      ['openapi/objects.d.ts', 'export interface paths {}'],
      ['tsconfig.build.json', '{"compilerOptions": {}}'],
      ['nest-cli.json', '{"monorepo": true}'],
      ['package-lock.json', '{"lockfileVersion": 3, "packages": {}}'],
    ]) {
      built();
      write(path, text);
      expect({ path, stale: stale() }).toEqual({ path, stale: 'sources changed since the last build' });
    }
  });

  it('does not build again for files the build does not read: tests, SQL snapshots, docs, package.json scripts', () => {
    built();
    write('apps/objects/src/object-reads/objects.service.spec.ts', 'another unit test');
    write('test/sql-snapshots/objects/reads.sql', 'SELECT 1;');
    write('README.md', 'more docs');
    write('openapi/objects.json', '{"openapi": "3.0.0"}');
    write('package.json', '{"scripts": {}}');
    write('test/some.e2e-spec.ts', 'an e2e test');
    expect(stale()).toBeNull();
  });

  it('does not build again for what a package under libs/ builds or installs (libs/client/dist)', () => {
    built();
    write('libs/client/dist/index.js', 'export {};');
    write('libs/client/dist.tmp-123/index.js', 'export {};');
    write('libs/client/node_modules/x/index.js', '');
    expect(stale()).toBeNull();
    write('libs/client/src/sdk/index.ts', 'the runtime');
    expect(stale()).toBe('sources changed since the last build');
  });

  it('builds again when an entry point is gone', () => {
    built();
    rmSync(join(root, 'dist/apps/object-sets/apps/object-sets/src/main.js'));
    expect(stale()).toBe('dist/apps/object-sets/apps/object-sets/src/main.js is missing');
  });
});
