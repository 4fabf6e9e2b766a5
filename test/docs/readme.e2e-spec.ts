import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { esmExports, ROOT, RunningNpmStart, startNpmStart } from '../support/npm-start';
import { Call, checkSteps, runSession } from '../support/shell-session';

/**
 * The README as a newcomer follows it, on a fresh `npm start` with the demo data: every URL of
 * its table answers, and its curl session, run as written (only `B=` points at the test's
 * gateway), answers at every step what the README says it does. Then docs/api.md §6's examples
 * (the ontology, where a change can break the demo), run the same way, break none of it.
 */

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const API_DOC = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');

/** The text of the README section that starts with `heading`, up to the next heading of its level. */
function section(heading: string): string {
  const start = README.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const level = heading.split(' ')[0];
  const next = README.slice(start + heading.length).search(new RegExp(`\\n${level} `));
  return next < 0 ? README.slice(start) : README.slice(start, start + heading.length + next);
}

describe('the README, followed on a fresh npm start', () => {
  let app: RunningNpmStart;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await createTestDatabase();
    drop = database.drop;
    app = await startNpmStart({ DATABASE_URL: database.url });
  }, 240_000);
  afterAll(async () => {
    await app?.stop();
    await drop?.();
  });

  /** A URL of the README with its default ports replaced by the test's. */
  const local = (url: string) =>
    url
      .replace('localhost:8080', `localhost:${app.ports.gateway}`)
      .replace('localhost:3001', `localhost:${app.ports.objects}`)
      .replace('localhost:3002', `localhost:${app.ports.objectSets}`);

  it('answers 200 at every URL of the table under "Run it", as shown', async () => {
    const rows = section('## Run it')
      .split('\n')
      .filter((line) => /^\| (POST )?http/.test(line))
      .map((line) => line.split(' | ')[0].slice(2));
    expect(rows.length).toBeGreaterThanOrEqual(8);
    const answers: string[] = [];
    for (const row of rows) {
      const post = /^POST (\S+) with `(.*)`$/.exec(row);
      const requests = post ? [{ url: post[1], body: post[2] }] : row.split(', ').map((url) => ({ url, body: undefined }));
      for (const { url, body } of requests) {
        const res = await fetch(local(url), body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body } : {});
        const text = await res.text();
        answers.push(`${body ? 'POST ' : ''}${url}: ${res.status}`);
        if (url.endsWith('/object-sets/search')) expect(JSON.parse(text).objectSets).toHaveLength(8);
        if (url.endsWith('/members'))
          expect(Object.values(JSON.parse(text).members as Record<string, string[]>).flat().length).toBeGreaterThan(0);
      }
    }
    expect(answers.filter((a) => !a.endsWith(': 200'))).toEqual([]);
  });

  it('runs the curl session as written, each step answering what its comment says', async () => {
    const block = /```sh\n([\s\S]*?)```/.exec(section('## A session with curl'))![1];
    expect(block.startsWith('B=http://localhost:8080\n')).toBe(true);
    const { calls } = await runSession(local(block));
    const expectations: [string, (c: Call) => void][] = [
      ['GET /ontology', (c) => expect(c.status).toBe(200)],
      [
        'PUT /ontology?dryRun=true without person.active: a breaking report, nothing published',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json).toMatchObject({ activeVersion: 1, breaking: true, changeCount: 1, objectSetCount: 1 });
          expect(c.json.changes).toEqual([
            expect.objectContaining({
              kind: 'PROPERTY_REMOVED',
              objectTypeId: 'person',
              propertyId: 'active',
              objectCount: expect.any(Number),
            }),
          ]);
          expect(c.json.changes[0].objectCount).toBeGreaterThan(0);
          expect(c.json.objectSets).toEqual([expect.objectContaining({ title: 'Active people in prod', usedBy: 2 })]);
        },
      ],
      ['GET /ontology', (c) => expect([c.status, c.json.version]).toEqual([200, 1])],
      [
        'PUT /ontology: the demo ontology and ships and ports',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.version).toBe(2);
          expect(c.json.objectTypes.map((t: { id: string }) => t.id)).toEqual(['person', 'company', 'project', 'site', 'ship', 'port']);
          expect(c.json.linkTypes.map((t: { id: string }) => t.id)).toContain('dockedAt');
        },
      ],
      ['PUT ship-1: 201, version 1', (c) => expect([c.status, c.json.version]).toEqual([201, 1])],
      [
        'PUT ship-1 again: 200, version 2, tonnage and link kept',
        (c) => {
          expect([c.status, c.json.version]).toEqual([200, 2]);
          expect(c.json.object.properties).toEqual([
            { id: 'name', value: 'HMS Endeavour', origin: 'registry', trigger: 'rename-1768' },
            { id: 'tonnage', value: 366, origin: 'registry' },
          ]);
          expect(c.json.object.links).toEqual({ dockedAt: ['port-7'] });
        },
      ],
      [
        'GET ship-1',
        (c) =>
          expect([c.status, c.json.id, c.json.properties[0].value, c.json.links]).toEqual([
            200,
            'ship-1',
            'HMS Endeavour',
            { dockedAt: ['port-7'] },
          ]),
      ],
      [
        'bulk: in request order',
        (c) => expect([c.status, c.json.objects.map((o: { id: string }) => o.id)]).toEqual([200, ['ship-1', 'person-001']]),
      ],
      [
        'history: versions 1 and 2',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.objects.map((v: { version: number }) => v.version)).toEqual([1, 2]);
        },
      ],
      ['at version 1', (c) => expect([c.status, c.json.version, c.json.object.properties[0].value]).toEqual([200, 1, 'Endeavour'])],
      ['at a timestamp: version 2', (c) => expect([c.status, c.json.version]).toEqual([200, 2])],
      [
        'ingest port-7',
        (c) => expect([c.status, c.json.results]).toEqual([200, [{ environmentId: 'prod', id: 'port-7', version: 1, changed: true }]]),
      ],
      [
        'search: ship-1 with its link',
        (c) =>
          expect([c.status, c.json.objects]).toEqual([200, [{ id: 'ship-1', environmentId: 'prod', links: { dockedAt: ['port-7'] } }]]),
      ],
      ['ordered search: the one ship', (c) => expect([c.status, c.json.objects]).toEqual([200, [{ id: 'ship-1', environmentId: 'prod' }]])],
      [
        'count by type and environment: one ship in prod among the demo objects',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.groups).toContainEqual({ key: { type: 'ship', environmentId: 'prod' }, metrics: { count: 1 } });
          expect(c.json.groups.length).toBeGreaterThan(1);
        },
      ],
      [
        'ships per month of their last sighting',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.groups).toHaveLength(1);
          expect(c.json.groups[0].metrics).toEqual({ count: 1, 'exactDistinct.environmentId': 1 });
          expect(Object.keys(c.json.groups[0].key)).toEqual(['month']);
        },
      ],
      ['create "Historic ships"', (c) => expect([c.status, c.json.title]).toEqual([201, 'Historic ships'])],
      ['its members: ship-1', (c) => expect([c.status, c.json.members]).toEqual([200, { prod: ['ship-1'] }])],
      ['its metadata', (c) => expect([c.status, c.json.title, c.json.creator]).toEqual([200, 'Historic ships', 'anonymous'])],
      ['create "Ports of historic ships"', (c) => expect([c.status, c.json.definition.type]).toEqual([201, 'linkOperation'])],
      ['the ports: port-7', (c) => expect([c.status, c.json.members]).toEqual([200, { prod: ['port-7'] }])],
      [
        'fuzzy title search: both sets, despite the typo (an equal match, so the newer first)',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.objectSets.map((s: { title: string }) => s.title)).toEqual(['Ports of historic ships', 'Historic ships']);
        },
      ],
      ['DELETE ship-1: 204', (c) => expect([c.status, c.body]).toEqual([204, ''])],
      ['GET ship-1: 404 ObjectNotFound', (c) => expect([c.status, c.json.errorName]).toEqual([404, 'ObjectNotFound'])],
      [
        'its history: both versions, the last one closed',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.objects.map((v: { version: number }) => v.version)).toEqual([1, 2]);
          expect(c.json.objects[1].validTo).toBeDefined();
        },
      ],
    ];
    checkSteps(calls, expectations);
  });

  it("runs docs/api.md §6's examples as written: the breaking change only reported and refused, the addition published, every demo set still readable", async () => {
    const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    const ontologySection = api.slice(api.indexOf('\n## 6. Ontology\n'), api.indexOf('\n## 7. Filters\n'));
    const blocks = [...ontologySection.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const before = (await (await fetch(local('http://localhost:8080/ontology'))).json()) as { version: number };
    const { calls } = await runSession(local(`B=http://localhost:8080\n${blocks.join('\n')}`));
    const expectations: [string, (c: Call) => void][] = [
      ['GET /ontology', (c) => expect([c.status, c.json.version]).toEqual([200, before.version])],
      ['GET /ontology/versions/1', (c) => expect([c.status, c.json.version]).toEqual([200, 1])],
      ['GET /ontology (to remove active)', (c) => expect(c.status).toBe(200)],
      [
        'the dry run: breaking, naming "Active people in prod"',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json).toMatchObject({
            activeVersion: before.version,
            breaking: true,
            changes: [{ kind: 'PROPERTY_REMOVED', objectTypeId: 'person', propertyId: 'active' }],
          });
          expect(c.json.objectSets).toEqual([
            {
              objectSetId: 'ri.object-set.main.object-set.00000000-0000-4000-8000-000000000003',
              title: 'Active people in prod',
              path: 'definition.filter.filter.propertyEquals.propertyId',
              reason: `unknown property 'active' in ontology version ${before.version + 1}`,
              usedBy: 2,
            },
          ]);
        },
      ],
      [
        'the publish: 409 OntologyChangeBreaks',
        (c) => expect([c.status, c.json.errorName, c.json.parameters.breaking]).toEqual([409, 'OntologyChangeBreaks', true]),
      ],
      ['GET /ontology (to add nickname)', (c) => expect([c.status, c.json.version]).toEqual([200, before.version])],
      ['the addition: published', (c) => expect([c.status, c.json.version]).toEqual([200, before.version + 1])],
    ];
    checkSteps(calls, expectations);
    const { DEMO_SET_IDS } = esmExports<{ DEMO_SET_IDS: Record<string, string> }>('scripts/lib/demo-data.mjs', ['DEMO_SET_IDS']);
    for (const [role, id] of Object.entries(DEMO_SET_IDS)) {
      const res = await fetch(local(`http://localhost:8080/object-sets/${encodeURIComponent(id)}/members`));
      expect({ role, status: res.status }).toEqual({ role, status: 200 });
    }
  });

  it('runs the time travel session as written, each step answering what its comment says', async () => {
    const block = /```sh\n([\s\S]*?)```/.exec(section('### Time travel'))![1];
    expect(block.startsWith('B=http://localhost:8080\n')).toBe(true);
    const { calls } = await runSession(local(block));
    const ids = (c: Call) => c.json.objects.map((o: { id: string }) => o.id);
    const expectations: [string, (c: Call) => void][] = [
      ['PUT tt-1 (a vip)', (c) => expect(c.status).toBe(201)],
      ['PUT tt-2', (c) => expect(c.status).toBe(201)],
      ['rename tt-1, untag', (c) => expect([c.status, c.json.version]).toEqual([200, 2])],
      ['tag tt-2', (c) => expect([c.status, c.json.version]).toEqual([200, 2])],
      [
        'tt-1 as of T: Grace, vip, with asOf',
        (c) => expect([c.status, c.json.properties[0].value, c.json.tags, typeof c.json.asOf]).toEqual([200, 'Grace', ['vip'], 'string']),
      ],
      ['search as of T: tt-1', (c) => expect([c.status, ids(c), typeof c.json.asOf]).toEqual([200, ['tt-1'], 'string'])],
      [
        'the VIP set as of T: Grace, not Alan',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.members.prod).toContain('tt-1');
          expect(c.json.members.prod).not.toContain('tt-2');
          expect(typeof c.json.asOf).toBe('string');
        },
      ],
      ['the diff since T', (c) => expect([c.status, c.json]).toEqual([200, { added: { prod: ['tt-2'] }, removed: { prod: ['tt-1'] } }])],
      [
        'a snapshot walk: first page, its instant, a token',
        (c) => expect([c.status, ids(c), typeof c.json.asOf, typeof c.json.pagingToken]).toEqual([200, ['tt-1'], 'string', 'string']),
      ],
    ];
    checkSteps(calls, expectations);
  });
  it('runs the geo search examples of docs/api.md §13 on the demo data through the gateway, each answering what its comment says', async () => {
    const geo = API_DOC.slice(API_DOC.indexOf('## 13. Geo search'));
    const blocks = [...geo.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toHaveLength(3);
    const { calls } = await runSession(local(`B=http://localhost:8080\n${blocks.join('\n')}`));
    const ids = (c: Call) => c.json.objects.map((o: { id: string }) => o.id);
    const sorted = (c: Call) => [...ids(c)].sort();
    const firstGroup = (c: Call) => c.json.groups[0];
    const expectations: [string, (c: Call) => void][] = [
      ['within 500 km of Paris', (c) => expect([c.status, sorted(c)]).toEqual([200, ['site-001', 'site-002', 'site-007', 'site-011']])],
      ['a box across the antimeridian', (c) => expect([c.status, sorted(c)]).toEqual([200, ['site-025', 'site-026', 'site-027']])],
      ['a polygon around Germany', (c) => expect([c.status, sorted(c)]).toEqual([200, ['site-004', 'site-005', 'site-006']])],
      [
        'the three sites nearest the Eiffel Tower',
        (c) => {
          expect([c.status, ids(c), typeof c.json.pagingToken]).toEqual([200, ['site-001', 'site-007', 'site-002'], 'string']);
          expect(c.json.objects.map((o: { distanceMeters: number }) => Math.round(o.distanceMeters / 100) / 10)).toEqual([
            4.2, 341.3, 393.8,
          ]);
        },
      ],
      [
        'the farthest first',
        (c) => expect([c.status, ids(c), Math.round(c.json.objects[0].distanceMeters / 1000)]).toEqual([200, ['site-025'], 18547]),
      ],
      [
        'sites per geohash cell of one character',
        (c) =>
          expect([c.status, c.json.groups.slice(0, 2), c.json.truncated]).toEqual([
            200,
            [
              { key: { location: 'u' }, metrics: { count: 8 } },
              { key: { location: 'g' }, metrics: { count: 3 } },
            ],
            false,
          ]),
      ],
      [
        'bounds and centroid per country, by country',
        (c) => {
          expect(c.status).toBe(200);
          expect(c.json.groups.map((g: { key: { country: string } }) => g.key.country)).toEqual(
            [...c.json.groups.map((g: { key: { country: string } }) => g.key.country)].sort(),
          );
          expect(firstGroup(c).key).toEqual({ country: 'AQ' });
          expect(firstGroup(c).metrics['geoBounds.location']).toEqual({
            southWest: { lat: -90, lon: 0 },
            northEast: { lat: -77.8419, lon: 166.6863 },
          });
          expect(firstGroup(c).metrics['geoCentroid.location'].lat).toBeCloseTo(-83.921, 3);
        },
      ],
    ];
    checkSteps(calls, expectations);
  });
});
