import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';
import { ROOT } from '../support/paths';

/**
 * The layout's import rules (README "Layout"), checked on every TypeScript file of apps/ and libs/:
 * - the kernel (libs/domain, `@app/domain`) is pure: it imports no framework (Nest, TypeORM, pg,
 *   Express, prom-client, OpenTelemetry, class-validator, pino) and nothing from libs/platform;
 * - no app imports another app (they talk over HTTP, through the contract in libs/domain/src/internal-api);
 * - no lib imports an app;
 * - no file imports itself through others (an import circle): each file can be read, and moved,
 *   after what it imports.
 */
const KERNEL_FORBIDDEN = [
  /^@nestjs\//,
  /^typeorm(\/|$)/,
  /^pg(\/|$)/,
  /^express(\/|$)/,
  /^prom-client(\/|$)/,
  /^@opentelemetry\//,
  /^class-(validator|transformer)(\/|$)/,
  /^(nestjs-)?pino(-http)?(\/|$)/,
  /^@app\/platform(\/|$)/,
];
const ALIASES: Record<string, string> = {
  '@app/domain': 'libs/domain/src',
  '@app/platform': 'libs/platform/src',
  '@app/client': 'libs/client/src',
};

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // A package's build output (libs/client/dist) is not source.
    if (entry.isDirectory()) {
      if (entry.name !== 'dist' && entry.name !== 'node_modules') tsFiles(path, out);
    } else if (entry.name.endsWith('.ts')) out.push(path.split(sep).join('/'));
  }
  return out;
}

/** Every module a file names: imports, re-exports, require() and import() alike. */
function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

/** The repository path a specifier points into, or undefined for a package. */
function target(file: string, spec: string): string | undefined {
  if (spec.startsWith('.'))
    return relative(ROOT, resolve(ROOT, dirname(file), spec))
      .split(sep)
      .join('/');
  const alias = Object.keys(ALIASES).find((a) => spec === a || spec.startsWith(`${a}/`));
  return alias ? ALIASES[alias] + spec.slice(alias.length) : undefined;
}

const appOf = (path: string) => (path.startsWith('apps/') ? path.split('/')[1] : undefined);

/** `file: spec` for every import that breaks a rule. */
export function importViolations(files: string[], read: (file: string) => string[] = specifiers): string[] {
  const out: string[] = [];
  for (const file of files) {
    for (const spec of read(file)) {
      const to = target(file, spec);
      const fault =
        file.startsWith('libs/domain/') && KERNEL_FORBIDDEN.some((p) => p.test(spec))
          ? 'the kernel imports a framework or the platform'
          : file.startsWith('libs/domain/') && to !== undefined && !to.startsWith('libs/domain/')
            ? 'the kernel imports outside libs/domain'
            : file.startsWith('libs/') && to?.startsWith('apps/')
              ? 'a lib imports an app'
              : appOf(file) && to && appOf(to) && appOf(to) !== appOf(file)
                ? 'an app imports another app'
                : undefined;
      if (fault) out.push(`${file}: '${spec}' (${fault})`);
    }
  }
  return out;
}

/** The file a repository path names (`x` as `x.ts` or `x/index.ts`; `x.js`, as ES modules name it, as `x.ts`), or undefined. */
function fileOf(path: string, known: ReadonlySet<string>): string | undefined {
  return [`${path}.ts`, `${path}/index.ts`, path, path.replace(/\.js$/, '.ts')].find((f) => known.has(f));
}

/** Every import circle among `files`, each as `a -> b -> a`, found by a depth-first walk. */
export function importCircles(files: string[], read: (file: string) => string[] = specifiers): string[] {
  const known = new Set(files);
  const edges = new Map(
    files.map((file) => [
      file,
      [
        ...new Set(
          read(file)
            .map((spec) => target(file, spec))
            .flatMap((to) => (to === undefined ? [] : [fileOf(to, known)]))
            .filter((f): f is string => !!f),
        ),
      ],
    ]),
  );
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const circles: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') circles.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return circles;
}

describe('import rules', () => {
  const files = [...tsFiles('apps'), ...tsFiles('libs')];

  it('reads the whole tree', () => {
    expect(files.filter((f) => f.startsWith('libs/domain/')).length).toBeGreaterThan(20);
    expect(files.filter((f) => f.startsWith('libs/platform/')).length).toBeGreaterThan(20);
    expect(files.filter((f) => f.startsWith('apps/objects/')).length).toBeGreaterThan(20);
    expect(files.filter((f) => f.startsWith('apps/object-sets/')).length).toBeGreaterThan(10);
  });

  it('no file breaks them', () => {
    expect(importViolations(files)).toEqual([]);
  });

  it('no import circle', () => {
    expect(importCircles(files)).toEqual([]);
  });

  it('sees an import circle, also through an index file', () => {
    const imports: Record<string, string[]> = {
      'libs/platform/src/a/a.ts': ['../b/b'],
      'libs/platform/src/b/b.ts': ['@app/platform'],
      'libs/platform/src/index.ts': ['./a/a'],
      'libs/platform/src/c.ts': ['./a/a'],
    };
    expect(importCircles(Object.keys(imports), (f) => imports[f])).toEqual([
      'libs/platform/src/a/a.ts -> libs/platform/src/b/b.ts -> libs/platform/src/index.ts -> libs/platform/src/a/a.ts',
    ]);
    // ES module specifiers name the emitted .js file (libs/client).
    const esm: Record<string, string[]> = {
      'libs/client/src/sdk/a.ts': ['./b.js'],
      'libs/client/src/sdk/b.ts': ['../index.js'],
      'libs/client/src/index.ts': ['./sdk/a.js'],
    };
    expect(importCircles(Object.keys(esm), (f) => esm[f])).toEqual([
      'libs/client/src/sdk/a.ts -> libs/client/src/sdk/b.ts -> libs/client/src/index.ts -> libs/client/src/sdk/a.ts',
    ]);
  });

  it('sees each kind of break', () => {
    const imports: Record<string, string[]> = {
      'libs/domain/src/filter/a.ts': [
        '@nestjs/common',
        'pg',
        'typeorm',
        'express',
        'prom-client',
        '@opentelemetry/api',
        '@app/platform',
        '../../../platform/src/http',
      ],
      'libs/domain/src/filter/b.ts': ['./filter.types', '../errors', 'node:crypto'],
      'libs/platform/src/http/c.ts': ['../../../../apps/objects/src/create-app', '@app/domain'],
      'apps/objects/src/search/d.ts': ['../../../object-sets/src/clients/objects.client', '@app/platform', '../clients/object-sets.client'],
    };
    expect(importViolations(Object.keys(imports), (f) => imports[f])).toEqual([
      "libs/domain/src/filter/a.ts: '@nestjs/common' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: 'pg' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: 'typeorm' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: 'express' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: 'prom-client' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: '@opentelemetry/api' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: '@app/platform' (the kernel imports a framework or the platform)",
      "libs/domain/src/filter/a.ts: '../../../platform/src/http' (the kernel imports outside libs/domain)",
      "libs/platform/src/http/c.ts: '../../../../apps/objects/src/create-app' (a lib imports an app)",
      "apps/objects/src/search/d.ts: '../../../object-sets/src/clients/objects.client' (an app imports another app)",
    ]);
  });
});
