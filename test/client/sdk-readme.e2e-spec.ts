import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestDatabase } from '../support/database';
import { ROOT, RunningNpmStart, startNpmStart } from '../support/npm-start';

/**
 * README "Typed SDK" as a newcomer follows it, on a fresh `npm start` with the demo data: its
 * command generates the SDK, its five lines and its geo example run as pasted (only the port is
 * the test's) and print what the API says, its type-check command passes on both, and the misuses
 * it names do not compile. The newcomer works in a directory of the clone (here a fresh one,
 * removed afterwards).
 */
const run = promisify(execFile);
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

function section(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const next = README.indexOf('\n## ', start + heading.length + 1);
  return README.slice(start, next < 0 ? undefined : next);
}

describe('README "Typed SDK", followed on a fresh npm start', () => {
  let app: RunningNpmStart;
  let drop: () => Promise<void>;
  let dir: string;
  const text = section('## Typed SDK');
  const block = (lang: string) => [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
  const local = (s: string) => s.replace(/localhost:8080/g, `localhost:${app.ports.gateway}`);
  const sh = (command: string) => run('bash', ['-c', command], { cwd: dir });

  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    app = await startNpmStart({ DATABASE_URL: database.url });
    dir = mkdtempSync(join(ROOT, '.sdk-readme-'));
  }, 240_000);
  afterAll(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await app?.stop();
    await drop?.();
  });

  const api = async (path: string, body: object) => {
    const res = await fetch(`${app.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as {
      objects: { environmentId: string; id: string; distanceMeters?: number; properties: { id: string; value: unknown }[] }[];
      groups: { key: Record<string, string>; metrics: Record<string, number> }[];
    };
  };

  it('generates the SDK and runs the five lines as pasted, printing what the API answers', async () => {
    const [command] = block('sh');
    expect(command).toBe('npm run sdk -- --url http://localhost:8080 --out demo-sdk\n');
    const generated = await sh(local(command));
    expect(generated.stdout).toContain("import { createClient } from './demo-sdk/index.js';");

    const [code] = block('ts');
    expect(code.trimEnd().split('\n')).toHaveLength(5);
    writeFileSync(join(dir, 'query.mts'), local(code));
    expect(text).toContain('run `node query.mts`');
    const { stdout } = await sh('node query.mts');

    // What the API says: the three oldest active people aged 65 or more, then the energy companies employing VIPs.
    const person = { type: 'objectType', objectType: { types: ['person'] } };
    const oldest = await api('/objects/search?pageSize=3', {
      filter: {
        type: 'and',
        and: {
          filters: [
            person,
            { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 65 } },
            { type: 'propertyEquals', propertyEquals: { propertyId: 'active', value: true } },
          ],
        },
      },
      orderBy: [{ propertyId: 'age', direction: 'DESC' }],
    });
    const employers = await api('/objects/search?pageSize=1000', {
      filter: {
        type: 'and',
        and: {
          filters: [
            { type: 'propertyEquals', propertyEquals: { propertyId: 'industry', value: 'energy' } },
            {
              type: 'linkedFrom',
              linkedFrom: {
                linkId: 'worksFor',
                source: { type: 'and', and: { filters: [person, { type: 'tag', tag: { tags: ['vip'] } }] } },
              },
            },
          ],
        },
      },
    });
    const lines = stdout.trimEnd().split('\n');
    expect(oldest.objects).toHaveLength(3);
    expect(employers.objects.length).toBeGreaterThan(0);
    expect(lines).toHaveLength(3 + employers.objects.length);
    const bulk = await api('/objects/bulk', { objectIds: [...oldest.objects, ...employers.objects].map((o) => o.id) });
    const value = (id: string, env: string, p: string) =>
      bulk.objects
        .find((o) => o.id === id && o.environmentId === env)!
        .properties.filter((v) => v.id === p)
        .map((v) => v.value);
    oldest.objects.forEach((o, i) => {
      const emails = value(o.id, o.environmentId, 'email') as string[];
      expect(lines[i]).toBe(
        `${o.id} ${value(o.id, o.environmentId, 'name')[0] as string} ${value(o.id, o.environmentId, 'age')[0] as number} [ ${emails.map((e) => `'${e}'`).join(', ')} ]`,
      );
    });
    expect(lines.slice(3)).toEqual(employers.objects.map((o) => `${o.id} ${value(o.id, o.environmentId, 'name')[0] as string}`));
  });

  it('runs the geo example as pasted: the sites near Paris nearest first with their distances, then the sites per geohash cell', async () => {
    const [, code] = block('ts');
    expect(code).toContain('$withinDistance');
    writeFileSync(join(dir, 'geo.mts'), local(code));
    expect(text).toContain('`node geo.mts`');
    const { stdout } = await sh('node geo.mts');

    // What the API says: the sites within 500 km of Paris, nearest first, and the sites per cell of one character.
    const paris = { lat: 48.8566, lon: 2.3522 };
    const near = await api('/objects/search', {
      filter: {
        type: 'and',
        and: {
          filters: [
            { type: 'objectType', objectType: { types: ['site'] } },
            { type: 'geoWithinDistance', geoWithinDistance: { propertyId: 'location', center: paris, meters: 500_000 } },
          ],
        },
      },
      orderBy: [{ distanceFrom: { propertyId: 'location', point: paris } }],
    });
    const cells = await api('/objects/aggregate', {
      filter: { type: 'objectType', objectType: { types: ['site'] } },
      groupBy: [{ type: 'geoGrid', geoGrid: { propertyId: 'location', precision: 1 } }],
      metrics: [{ type: 'count', count: {} }],
    });
    const names = await api('/objects/bulk', { objectIds: near.objects.map((o) => o.id) });
    const name = (id: string) => names.objects.find((o) => o.id === id)!.properties.find((p) => p.id === 'name')!.value as string;
    expect(near.objects.map((o) => o.id)).toEqual(['site-001', 'site-007', 'site-002', 'site-011']);
    expect(stdout.trimEnd().split('\n')).toEqual([
      ...near.objects.map((o) => `${o.id} ${name(o.id)} ${o.distanceMeters}`),
      cells.groups.map((g) => `${g.key.location}: ${g.metrics.count}`).join(', '),
    ]);
    expect(stdout).toMatch(/^site-001 Paris 0\nsite-007 London 343\d{3}\.\d+\n/);
    expect(stdout).toMatch(/\nu: 8, /);
  });

  it("type-checks with the README's command, and the misuses it names do not compile", async () => {
    const check = /`(npx tsc [^`]+ query\.mts)`/.exec(text)![1];
    const misuses: Record<string, [string, string]> = {
      typo: ['age: { $gte: 65 }', 'agee: { $gte: 65 }'],
      operator: ['age: { $gte: 65 }', "age: { $startsWith: '6' }"],
      link: ["pivotTo('worksFor')", "pivotTo('ownedBy')"],
    };
    expect(text).toContain("`age: { $startsWith: '6' }`");
    expect(text).toContain("`pivotTo('ownedBy')`");
    const code = readFileSync(join(dir, 'query.mts'), 'utf8');
    for (const [name, [from, to]] of Object.entries(misuses)) writeFileSync(join(dir, `${name}.mts`), code.replace(from, to));
    // One run of the command for the five lines and the geo example as pasted and the three misuses (tsc checks each file on its own terms).
    const files = ['query.mts', 'geo.mts', ...Object.keys(misuses).map((n) => `${n}.mts`)];
    const errors = await sh(check.replace('query.mts', files.join(' '))).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(errors).not.toMatch(/^(query|geo)\.mts/m);
    expect(errors).toMatch(/typo\.mts\(3,\d+\): error TS\d+: .*'agee' does not exist/);
    expect(errors).toMatch(/operator\.mts\(3,\d+\): error TS\d+: .*'\$startsWith' does not exist/);
    expect(errors).toMatch(/link\.mts\(5,\d+\): error TS\d+: Argument of type '"ownedBy"' is not assignable/);
  });

  // Last: it writes person-900.
  it('runs the typed HTTP client script of docs/sdk.md as written, importing the package by name', async () => {
    const docs = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8');
    const part = docs.slice(docs.indexOf('\n## The typed HTTP client\n'), docs.indexOf('\n## Tests\n'));
    const [code] = [...part.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(code).toContain("from '@ontology-object-service/client';");
    writeFileSync(join(dir, 'client.mts'), local(code));
    const { stdout } = await sh('node client.mts');
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toContain('prod person-900');
    expect(lines).toContain('404 ObjectNotFound nobody');
    expect(stdout).toMatch(/\{\s*prod: \[[^\]]*'person-0/);
  });
});
