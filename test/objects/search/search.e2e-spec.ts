import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { extendOntology, WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * searchObjects (POST /objects/search): every ObjectSearchFilter variant of docs/api.md §7 on real
 * data in two environments, loadLinks, keyset paging and the InvalidFilter / InvalidArgument /
 * InvalidPagingToken errors. Every assertion is the exact ordered list of `environmentId/id`.
 */

const ONTOLOGY = extendOntology({
  properties: {
    person: [
      { id: 'code', type: 'string' },
      { id: 'bio', type: 'string' },
    ],
  },
  objectTypes: [{ id: 'device', properties: [{ id: 'serial', type: 'string' }] }],
  linkTypes: [
    { id: 'owns', sourceType: 'person', targetType: 'device' },
    { id: 'madeBy', sourceType: 'device', targetType: 'company' },
  ],
});

type Prop = [id: string, value: unknown, origin?: string];
const DEFAULT_SIGHTINGS = { firstSighting: '2025-06-01T00:00:00Z', lastSighting: '2025-06-02T00:00:00Z' };

function obj(
  environmentId: string,
  id: string,
  type: string,
  props: Prop[],
  extra: { links?: Record<string, string[]>; tags?: string[]; metadata?: { firstSighting: string; lastSighting: string } } = {},
) {
  return {
    environmentId,
    id,
    type,
    properties: props.map(([pid, value, origin]) => ({ id: pid, value, origin: origin ?? 'crm' })),
    metadata: extra.metadata ?? DEFAULT_SIGHTINGS,
    ...(extra.links ? { links: extra.links } : {}),
    ...(extra.tags ? { tags: extra.tags } : {}),
  };
}

const OBJECTS = [
  obj('prod', 'c-1', 'company', [['name', 'Acme Corp']], { tags: ['partner'] }),
  obj('prod', 'c-2', 'company', [['name', 'Globex']]),
  obj('prod', 'd-1', 'device', [['serial', 'X-1']], { links: { madeBy: ['c-1'] } }),
  obj('prod', 'Z-1', 'device', [['serial', 'Z']]),
  obj(
    'prod',
    'p-1',
    'person',
    [
      ['name', 'Ada Lovelace'],
      ['age', 36],
      ['score', 9.5],
      ['active', true],
      ['born', '1815-12-10'],
      ['seenAt', '2026-03-01T10:00:00Z'],
      ['home', { lat: 51.5, lon: -0.12 }],
      ['email', 'ada@example.com'],
      ['email', 'ada@math.org', 'scraper'],
      ['code', 'Alpha'],
      ['bio', 'The quick brown fox jumps over the lazy dog', 'wiki'],
    ],
    {
      tags: ['vip', 'math'],
      links: { worksFor: ['c-1'], knows: ['p-2'] },
      metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-01-31T00:00:00Z' },
    },
  ),
  obj(
    'prod',
    'p-2',
    'person',
    [
      ['name', 'Bob Builder', 'hr'],
      ['age', 40],
      ['score', 7.25],
      ['active', false],
      ['born', '1980-05-01'],
      ['seenAt', '2026-03-01T14:00:00+02:00'], // 12:00Z
      ['home', { lat: 48.85, lon: 2.35 }],
      ['email', 'bob@example.com'],
      ['code', 'alpha'],
      ['bio', 'Brown dogs are QUICK', 'wiki'],
    ],
    {
      tags: ['vip'],
      links: { worksFor: ['c-2'], knows: ['p-3'], owns: ['d-1'] },
      metadata: { firstSighting: '2026-02-01T00:00:00Z', lastSighting: '2026-02-15T00:00:00Z' },
    },
  ),
  obj(
    'prod',
    'p-3',
    'person',
    [
      ['name', 'Carol'],
      ['age', 25],
      ['score', 3],
      ['active', true],
      ['born', '1999-12-31'],
      ['seenAt', '2026-03-01T09:30:00-02:00'], // 11:30Z
      ['home', { lat: -0.12, lon: 51.5 }], // p-1's point with lat and lon swapped
      ['email', 'carol@example.com'],
      ['email', 'ada@example.com'],
      ['code', '50%off'],
      ['bio', 'dog brown quick', 'wiki'],
    ],
    {
      tags: ['math'],
      links: { worksFor: ['c-1'] },
      metadata: { firstSighting: '2026-01-15T00:00:00Z', lastSighting: '2026-03-01T00:00:00Z' },
    },
  ),
  obj(
    'prod',
    'p-4',
    'person',
    [
      ['name', 'Dave'],
      ['age', 41],
      ['code', '50xoff'],
    ],
    { metadata: { firstSighting: '2026-03-01T00:00:00Z', lastSighting: '2026-03-10T00:00:00Z' } },
  ),
  obj('prod', 'p-5', 'person', [
    ['name', 'Eve'],
    ['code', '5_a'],
  ]),
  obj('prod', 'p-6', 'person', [
    ['name', 'Frank'],
    ['code', '5ba'],
  ]),
  obj('prod', 'p-7', 'person', [
    ['name', 'Grace'],
    ['code', 'Beta'],
  ]),
  obj('prod', 'p-8', 'person', [
    ['name', 'heidi'],
    ['code', 'beta'],
  ]),
  obj('prod', 'p-9', 'person', [
    ['name', 'Ivan'],
    ['code', 'Zulu', 'import'],
  ]),
  obj('staging', 'c-1', 'company', [['name', 'Acme', 'import']]),
  obj(
    'staging',
    'p-1',
    'person',
    [
      ['name', 'Ada Lovelace', 'import'],
      ['age', 36, 'import'],
      ['email', 'ada@example.com', 'import'],
    ],
    // staging/p-3 does not exist: a dangling link must not reach prod/p-3.
    { tags: ['vip'], links: { knows: ['p-3'] } },
  ),
  // staging/d-1 does not exist either.
  obj('staging', 'p-2', 'person', [['name', 'Bob Staging', 'import']], { links: { worksFor: ['c-1'], owns: ['d-1'] } }),
];

/** Every object, in (environmentId, id) code-point order: uppercase before lowercase. */
const ALL = [
  'prod/Z-1',
  'prod/c-1',
  'prod/c-2',
  'prod/d-1',
  'prod/p-1',
  'prod/p-2',
  'prod/p-3',
  'prod/p-4',
  'prod/p-5',
  'prod/p-6',
  'prod/p-7',
  'prod/p-8',
  'prod/p-9',
  'staging/c-1',
  'staging/p-1',
  'staging/p-2',
];

type Filter = Record<string, unknown>;
const f = {
  and: (...filters: unknown[]): Filter => ({ type: 'and', and: { filters } }),
  or: (...filters: unknown[]): Filter => ({ type: 'or', or: { filters } }),
  not: (filter: unknown): Filter => ({ type: 'not', not: { filter } }),
  all: (): Filter => ({ type: 'all', all: {} }),
  objectType: (...types: string[]): Filter => ({ type: 'objectType', objectType: { types } }),
  environment: (...environmentIds: string[]): Filter => ({ type: 'environment', environment: { environmentIds } }),
  objectId: (...ids: string[]): Filter => ({ type: 'objectId', objectId: { ids } }),
  tag: (tags: string[], match?: 'ANY' | 'ALL'): Filter => ({ type: 'tag', tag: match === undefined ? { tags } : { tags, match } }),
  exists: (propertyId: string): Filter => ({ type: 'propertyExists', propertyExists: { propertyId } }),
  eq: (propertyId: string, value: unknown): Filter => ({ type: 'propertyEquals', propertyEquals: { propertyId, value } }),
  in: (propertyId: string, values: unknown[]): Filter => ({ type: 'propertyIn', propertyIn: { propertyId, values } }),
  range: (propertyId: string, bounds: Record<string, unknown>): Filter => ({
    type: 'propertyRange',
    propertyRange: { propertyId, ...bounds },
  }),
  prefix: (propertyId: string, prefix: string, caseInsensitive?: boolean): Filter => ({
    type: 'propertyPrefix',
    propertyPrefix: caseInsensitive === undefined ? { propertyId, prefix } : { propertyId, prefix, caseInsensitive },
  }),
  text: (query: string, opts: { propertyId?: string; match?: string } = {}): Filter => ({
    type: 'propertyText',
    propertyText: { query, ...opts },
  }),
  origin: (origin: string, propertyId?: string): Filter => ({
    type: 'propertyOrigin',
    propertyOrigin: propertyId === undefined ? { origin } : { origin, propertyId },
  }),
  hasLink: (linkId: string, targetIds?: string[]): Filter => ({
    type: 'hasLink',
    hasLink: targetIds === undefined ? { linkId } : { linkId, targetIds },
  }),
  linkedFrom: (linkId: string, source: unknown): Filter => ({ type: 'linkedFrom', linkedFrom: { linkId, source } }),
  linksTo: (linkId: string, target: unknown): Filter => ({ type: 'linksTo', linksTo: { linkId, target } }),
  firstSighting: (w: { start?: string; end?: string }): Filter => ({ type: 'firstSighting', firstSighting: w }),
  lastSighting: (w: { start?: string; end?: string }): Filter => ({ type: 'lastSighting', lastSighting: w }),
  sightedDuring: (start: string, end: string): Filter => ({ type: 'sightedDuring', sightedDuring: { start, end } }),
};

interface Hit {
  id: string;
  environmentId: string;
  links?: Record<string, string[]>;
}
const keys = (body: { objects: Hit[] }) => body.objects.map((o) => `${o.environmentId}/${o.id}`);

function expectError(res: { status: number; body: Record<string, unknown> }, errorName: string, parameters?: Record<string, unknown>) {
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ errorCode: 'INVALID_ARGUMENT', errorName, errorInstanceId: expect.any(String) });
  if (parameters) expect(res.body.parameters).toMatchObject(parameters);
}

describe('POST /objects/search', () => {
  let t: TestObjectsApp;

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    await t.http().post('/objects/ingest').send({ objects: OBJECTS }).expect(200);
  });
  afterAll(() => t?.close());

  const post = (body: Record<string, unknown>, query: Record<string, unknown> = {}) =>
    t.http().post('/objects/search').query(query).send(body);

  /** Asserts the exact ordered result of a single-page search. */
  async function expectMatches(filter: unknown, expected: string[]) {
    const res = await post({ filter });
    if (res.status !== 200) throw new Error(`search failed ${res.status}: ${JSON.stringify(res.body)}`);
    expect(keys(res.body)).toEqual(expected);
    expect(res.body.pagingToken).toBeUndefined();
    for (const o of res.body.objects) expect(Object.keys(o).sort()).toEqual(['environmentId', 'id']);
  }

  describe('logical variants', () => {
    it('all: every object in both environments, ordered by (environmentId, id) in code-point order', async () => {
      await expectMatches(f.all(), ALL);
    });

    it('and: every filter holds', async () => {
      await expectMatches(f.and(f.objectType('person'), f.tag(['vip'])), ['prod/p-1', 'prod/p-2', 'staging/p-1']);
      await expectMatches(f.and(f.objectType('person'), f.range('age', { gte: 36 })), ['prod/p-1', 'prod/p-2', 'prod/p-4', 'staging/p-1']);
      await expectMatches(f.and(f.tag(['vip']), f.environment('staging')), ['staging/p-1']);
      await expectMatches(f.and(f.all()), ALL);
    });

    it('or: any filter holds', async () => {
      await expectMatches(f.or(f.objectId('c-2'), f.tag(['partner'])), ['prod/c-1', 'prod/c-2']);
      await expectMatches(f.or(f.eq('name', 'Eve'), f.eq('name', 'Acme')), ['prod/p-5', 'staging/c-1']);
      await expectMatches(f.or(f.eq('name', 'nobody')), []);
    });

    it('not: the filter does not hold; double negation restores it', async () => {
      await expectMatches(f.not(f.objectType('person')), ['prod/Z-1', 'prod/c-1', 'prod/c-2', 'prod/d-1', 'staging/c-1']);
      await expectMatches(f.not(f.not(f.tag(['vip']))), ['prod/p-1', 'prod/p-2', 'staging/p-1']);
      await expectMatches(f.not(f.all()), []);
    });
  });

  describe('object-level variants', () => {
    it('objectType: one of the types', async () => {
      await expectMatches(f.objectType('company'), ['prod/c-1', 'prod/c-2', 'staging/c-1']);
      await expectMatches(f.objectType('device', 'company'), ['prod/Z-1', 'prod/c-1', 'prod/c-2', 'prod/d-1', 'staging/c-1']);
    });

    it('environment: one of the environments (an unknown one matches nothing)', async () => {
      await expectMatches(f.environment('staging'), ['staging/c-1', 'staging/p-1', 'staging/p-2']);
      await expectMatches(f.environment('nowhere', 'staging'), ['staging/c-1', 'staging/p-1', 'staging/p-2']);
      await expectMatches(f.environment('nowhere'), []);
    });

    it('objectId: one of the ids, in any environment', async () => {
      await expectMatches(f.objectId('p-1', 'c-2', 'nope'), ['prod/c-2', 'prod/p-1', 'staging/p-1']);
    });

    it('tag: ANY by default and explicitly, ALL when asked', async () => {
      await expectMatches(f.tag(['vip']), ['prod/p-1', 'prod/p-2', 'staging/p-1']);
      await expectMatches(f.tag(['vip', 'partner']), ['prod/c-1', 'prod/p-1', 'prod/p-2', 'staging/p-1']);
      await expectMatches(f.tag(['math'], 'ANY'), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.tag(['vip', 'math'], 'ALL'), ['prod/p-1']);
      await expectMatches(f.tag(['vip', 'partner'], 'ALL'), []);
    });
  });

  describe('property variants', () => {
    it('propertyExists: has a value for the property (shared ids across types, multi-valued)', async () => {
      await expectMatches(f.exists('home'), ['prod/p-1', 'prod/p-2', 'prod/p-3']);
      await expectMatches(f.exists('email'), ['prod/p-1', 'prod/p-2', 'prod/p-3', 'staging/p-1']);
      await expectMatches(
        f.exists('name'),
        ALL.filter((k) => !['prod/Z-1', 'prod/d-1'].includes(k)),
      );
    });

    it('propertyEquals on strings: exact and case-sensitive', async () => {
      await expectMatches(f.eq('name', 'Ada Lovelace'), ['prod/p-1', 'staging/p-1']);
      await expectMatches(f.eq('name', 'ada lovelace'), []);
      await expectMatches(f.eq('name', 'Ada'), []);
      await expectMatches(f.eq('code', '50%off'), ['prod/p-3']);
    });

    it('propertyEquals on long, double, boolean and date', async () => {
      await expectMatches(f.eq('age', 36), ['prod/p-1', 'staging/p-1']);
      await expectMatches(f.eq('age', 40), ['prod/p-2']);
      await expectMatches(f.eq('score', 7.25), ['prod/p-2']);
      await expectMatches(f.eq('score', 3), ['prod/p-3']);
      await expectMatches(f.eq('active', true), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.eq('active', false), ['prod/p-2']);
      await expectMatches(f.eq('born', '1815-12-10'), ['prod/p-1']);
    });

    it('propertyEquals on timestamps compares instants, whatever offset the filter or the stored value uses', async () => {
      await expectMatches(f.eq('seenAt', '2026-03-01T11:00:00+01:00'), ['prod/p-1']);
      await expectMatches(f.eq('seenAt', '2026-03-01T10:00:00.000Z'), ['prod/p-1']);
      await expectMatches(f.eq('seenAt', '2026-03-01T12:00:00Z'), ['prod/p-2']); // stored as 14:00+02:00
      await expectMatches(f.eq('seenAt', '2026-03-01T06:30:00-05:00'), ['prod/p-3']); // stored as 09:30-02:00
      await expectMatches(f.eq('seenAt', '2026-03-01T11:00:00Z'), []);
    });

    it('propertyEquals on geopoints matches lat and lon, not the swapped point', async () => {
      await expectMatches(f.eq('home', { lat: 51.5, lon: -0.12 }), ['prod/p-1']);
      await expectMatches(f.eq('home', { lon: 51.5, lat: -0.12 }), ['prod/p-3']);
      await expectMatches(f.eq('home', { lat: 51.5, lon: 0.12 }), []);
    });

    it('multi-valued: equals holds when any value matches; not(equals x) excludes objects having x among several values', async () => {
      await expectMatches(f.eq('email', 'ada@example.com'), ['prod/p-1', 'prod/p-3', 'staging/p-1']);
      await expectMatches(f.eq('email', 'ada@math.org'), ['prod/p-1']);
      await expectMatches(f.and(f.objectType('person'), f.not(f.eq('email', 'ada@example.com'))), [
        'prod/p-2',
        'prod/p-4',
        'prod/p-5',
        'prod/p-6',
        'prod/p-7',
        'prod/p-8',
        'prod/p-9',
        'staging/p-2',
      ]);
      await expectMatches(f.and(f.exists('email'), f.not(f.eq('email', 'carol@example.com'))), ['prod/p-1', 'prod/p-2', 'staging/p-1']);
    });

    it('propertyIn: a value in the list, per type', async () => {
      await expectMatches(f.in('name', ['Globex', 'Dave', 'nobody']), ['prod/c-2', 'prod/p-4']);
      await expectMatches(f.in('name', ['globex']), []);
      await expectMatches(f.in('age', [25, 41, 99]), ['prod/p-3', 'prod/p-4']);
      await expectMatches(f.in('score', [9.5, 3]), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.in('active', [false]), ['prod/p-2']);
      await expectMatches(f.in('born', ['1980-05-01', '1999-12-31']), ['prod/p-2', 'prod/p-3']);
      await expectMatches(f.in('seenAt', ['2026-03-01T07:30:00-04:00', '2026-03-01T10:00:00.000Z']), ['prod/p-1', 'prod/p-3']);
      await expectMatches(
        f.in('home', [
          { lat: 48.85, lon: 2.35 },
          { lat: 0, lon: 0 },
        ]),
        ['prod/p-2'],
      );
      await expectMatches(f.in('email', ['bob@example.com', 'carol@example.com']), ['prod/p-2', 'prod/p-3']);
      await expectMatches(f.in('email', []), []);
    });

    it('propertyRange on numbers: inclusive and exclusive bounds', async () => {
      await expectMatches(f.range('age', { gte: 25, lt: 40 }), ['prod/p-1', 'prod/p-3', 'staging/p-1']);
      await expectMatches(f.range('age', { gt: 36, lte: 41 }), ['prod/p-2', 'prod/p-4']);
      await expectMatches(f.range('score', { gt: 3, lte: 9.5 }), ['prod/p-1', 'prod/p-2']);
      await expectMatches(f.range('score', { gte: 3, lt: 7.25 }), ['prod/p-3']);
      await expectMatches(f.range('score', { gt: 9.5 }), []);
    });

    it('propertyRange on dates and timestamps (instants, any offset)', async () => {
      await expectMatches(f.range('born', { gte: '1900-01-01', lt: '1999-12-31' }), ['prod/p-2']);
      await expectMatches(f.range('born', { lte: '1999-12-31' }), ['prod/p-1', 'prod/p-2', 'prod/p-3']);
      await expectMatches(f.range('born', { gt: '1815-12-10' }), ['prod/p-2', 'prod/p-3']);
      // (10:00Z, 11:30Z]
      await expectMatches(f.range('seenAt', { gt: '2026-03-01T11:00:00+01:00', lte: '2026-03-01T13:30:00+02:00' }), ['prod/p-3']);
      // [10:00Z, 12:00Z)
      await expectMatches(f.range('seenAt', { gte: '2026-03-01T05:00:00-05:00', lt: '2026-03-01T12:00:00Z' }), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.range('seenAt', { gte: '2026-03-01T12:00:00Z' }), ['prod/p-2']);
    });

    it('propertyRange on strings compares by code point (uppercase < "_" < lowercase, "%" < digits)', async () => {
      // codes: p-1 Alpha, p-2 alpha, p-3 50%off, p-4 50xoff, p-5 5_a, p-6 5ba, p-7 Beta, p-8 beta, p-9 Zulu
      await expectMatches(f.range('code', { gte: 'B', lt: 'a' }), ['prod/p-7', 'prod/p-9']);
      await expectMatches(f.range('code', { gt: 'Zulu' }), ['prod/p-2', 'prod/p-8']);
      await expectMatches(f.range('code', { lt: 'a' }), [
        'prod/p-1',
        'prod/p-3',
        'prod/p-4',
        'prod/p-5',
        'prod/p-6',
        'prod/p-7',
        'prod/p-9',
      ]);
      await expectMatches(f.range('code', { lte: '50xoff' }), ['prod/p-3', 'prod/p-4']);
      await expectMatches(f.range('code', { gt: '5', lt: '5c' }), ['prod/p-3', 'prod/p-4', 'prod/p-5', 'prod/p-6']);
      await expectMatches(f.range('code', { gte: 'alpha', lte: 'alpha' }), ['prod/p-2']);
    });

    it('propertyPrefix: case-sensitive by default, caseInsensitive when asked', async () => {
      await expectMatches(f.prefix('code', 'Al'), ['prod/p-1']);
      await expectMatches(f.prefix('code', 'al'), ['prod/p-2']);
      await expectMatches(f.prefix('code', 'Be', false), ['prod/p-7']);
      await expectMatches(f.prefix('code', 'AL', true), ['prod/p-1', 'prod/p-2']);
      await expectMatches(f.prefix('code', 'bE', true), ['prod/p-7', 'prod/p-8']);
      await expectMatches(f.prefix('name', 'Acme'), ['prod/c-1', 'staging/c-1']);
      await expectMatches(f.prefix('email', 'ada@'), ['prod/p-1', 'prod/p-3', 'staging/p-1']);
      await expectMatches(f.prefix('code', 'Alpha'), ['prod/p-1']);
      await expectMatches(f.prefix('code', 'Alphas'), []);
    });

    it('propertyPrefix: "%" and "_" are literal characters', async () => {
      await expectMatches(f.prefix('code', '50'), ['prod/p-3', 'prod/p-4']);
      await expectMatches(f.prefix('code', '50%'), ['prod/p-3']);
      await expectMatches(f.prefix('code', '5_'), ['prod/p-5']);
      await expectMatches(f.prefix('code', '%'), []);
      await expectMatches(f.prefix('code', '_'), []);
      await expectMatches(f.prefix('code', '50%O', true), ['prod/p-3']);
      await expectMatches(f.prefix('code', '5_A', true), ['prod/p-5']);
    });

    it('propertyText on one property: ALL_TERMS by default, no stemming, case-insensitive words', async () => {
      // bios: p-1 "The quick brown fox jumps over the lazy dog", p-2 "Brown dogs are QUICK", p-3 "dog brown quick"
      await expectMatches(f.text('quick brown', { propertyId: 'bio' }), ['prod/p-1', 'prod/p-2', 'prod/p-3']);
      await expectMatches(f.text('quick dog', { propertyId: 'bio' }), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.text('quick dog', { propertyId: 'bio', match: 'ALL_TERMS' }), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.text('LAZY', { propertyId: 'bio' }), ['prod/p-1']);
      await expectMatches(f.text('dogs', { propertyId: 'bio' }), ['prod/p-2']);
    });

    it('propertyText ANY_TERM and PHRASE', async () => {
      await expectMatches(f.text('fox dogs', { propertyId: 'bio', match: 'ANY_TERM' }), ['prod/p-1', 'prod/p-2']);
      await expectMatches(f.text('fox dogs', { propertyId: 'bio' }), []);
      await expectMatches(f.text('quick brown', { propertyId: 'bio', match: 'PHRASE' }), ['prod/p-1']);
      await expectMatches(f.text('QUICK Brown', { propertyId: 'bio', match: 'PHRASE' }), ['prod/p-1']);
      await expectMatches(f.text('brown quick', { propertyId: 'bio', match: 'PHRASE' }), ['prod/p-3']);
      await expectMatches(f.text('brown dogs', { propertyId: 'bio', match: 'PHRASE' }), ['prod/p-2']);
    });

    it('propertyText without propertyId: any string value, but a single value must hold all terms', async () => {
      await expectMatches(f.text('lovelace'), ['prod/p-1', 'staging/p-1']);
      await expectMatches(f.text('GLOBEX'), ['prod/c-2']);
      await expectMatches(f.text('lovelace', { propertyId: 'name' }), ['prod/p-1', 'staging/p-1']);
      await expectMatches(f.text('lovelace', { propertyId: 'bio' }), []);
      // "Ada" is in name, "fox" in bio: no single value holds both.
      await expectMatches(f.text('ada fox'), []);
      await expectMatches(f.text('ada fox', { match: 'ANY_TERM' }), ['prod/p-1', 'staging/p-1']);
      await expectMatches(f.text('lazy dog', { match: 'PHRASE' }), ['prod/p-1']);
    });

    it('propertyOrigin: a value from that origin, on any property or on the given one', async () => {
      await expectMatches(f.origin('hr'), ['prod/p-2']);
      await expectMatches(f.origin('wiki'), ['prod/p-1', 'prod/p-2', 'prod/p-3']);
      await expectMatches(f.origin('wiki', 'bio'), ['prod/p-1', 'prod/p-2', 'prod/p-3']);
      await expectMatches(f.origin('wiki', 'name'), []);
      await expectMatches(f.origin('import'), ['prod/p-9', 'staging/c-1', 'staging/p-1', 'staging/p-2']);
      await expectMatches(f.origin('import', 'name'), ['staging/c-1', 'staging/p-1', 'staging/p-2']);
      await expectMatches(f.origin('scraper', 'email'), ['prod/p-1']);
      await expectMatches(f.origin('Wiki'), []);
    });
  });

  describe('link variants', () => {
    it('hasLink: any outgoing link of the type, or one to the given targets', async () => {
      await expectMatches(f.hasLink('worksFor'), ['prod/p-1', 'prod/p-2', 'prod/p-3', 'staging/p-2']);
      await expectMatches(f.hasLink('worksFor', ['c-1']), ['prod/p-1', 'prod/p-3', 'staging/p-2']);
      await expectMatches(f.hasLink('worksFor', ['c-2', 'c-9']), ['prod/p-2']);
      await expectMatches(f.hasLink('knows'), ['prod/p-1', 'prod/p-2', 'staging/p-1']);
      await expectMatches(f.hasLink('madeBy'), ['prod/d-1']);
      await expectMatches(f.hasLink('knows', ['c-1']), []);
    });

    it('linkedFrom: targets of the link from a matching source, in the same environment only', async () => {
      await expectMatches(f.linkedFrom('worksFor', f.eq('name', 'Ada Lovelace')), ['prod/c-1']);
      // staging/p-1 knows p-3, which does not exist in staging: prod/p-3 must not appear.
      await expectMatches(f.linkedFrom('knows', f.eq('name', 'Ada Lovelace')), ['prod/p-2']);
      await expectMatches(f.linkedFrom('worksFor', f.all()), ['prod/c-1', 'prod/c-2', 'staging/c-1']);
      await expectMatches(f.linkedFrom('owns', f.all()), ['prod/d-1']);
      await expectMatches(f.linkedFrom('worksFor', f.tag(['math'])), ['prod/c-1']);
    });

    it('linksTo: sources whose link target exists and matches', async () => {
      await expectMatches(f.linksTo('worksFor', f.prefix('name', 'Acme')), ['prod/p-1', 'prod/p-3', 'staging/p-2']);
      await expectMatches(f.linksTo('worksFor', f.eq('name', 'Globex')), ['prod/p-2']);
      // staging/p-1 -> knows -> p-3 is dangling in staging.
      await expectMatches(f.linksTo('knows', f.all()), ['prod/p-1', 'prod/p-2']);
      await expectMatches(f.linksTo('madeBy', f.tag(['partner'])), ['prod/d-1']);
      // staging/p-2 -> owns -> d-1 is dangling in staging.
      await expectMatches(f.linksTo('owns', f.all()), ['prod/p-2']);
    });

    it('nested link filters two levels deep', async () => {
      // companies employing someone who owns device X-1 (staging/p-2 owns a dangling d-1)
      await expectMatches(f.linkedFrom('worksFor', f.linksTo('owns', f.eq('serial', 'X-1'))), ['prod/c-2']);
      // people who know someone working for Globex
      await expectMatches(f.linksTo('knows', f.linksTo('worksFor', f.eq('name', 'Globex'))), ['prod/p-1']);
      // makers of a device owned by Bob Builder
      await expectMatches(f.linkedFrom('madeBy', f.linkedFrom('owns', f.eq('name', 'Bob Builder'))), ['prod/c-1']);
      // people known by someone who works for a partner
      await expectMatches(f.linkedFrom('knows', f.linksTo('worksFor', f.tag(['partner']))), ['prod/p-2']);
      await expectMatches(f.and(f.objectType('person'), f.not(f.linksTo('worksFor', f.all()))), [
        'prod/p-4',
        'prod/p-5',
        'prod/p-6',
        'prod/p-7',
        'prod/p-8',
        'prod/p-9',
        'staging/p-1',
      ]);
    });
  });

  describe('sighting variants', () => {
    // first/last: p-1 01-01/01-31, p-2 02-01/02-15, p-3 01-15/03-01, p-4 03-01/03-10 (2026); others 2025-06-01/2025-06-02
    const OLD = [
      'prod/Z-1',
      'prod/c-1',
      'prod/c-2',
      'prod/d-1',
      'prod/p-5',
      'prod/p-6',
      'prod/p-7',
      'prod/p-8',
      'prod/p-9',
      'staging/c-1',
      'staging/p-1',
      'staging/p-2',
    ];

    it('firstSighting is [start, end): start included, end excluded', async () => {
      await expectMatches(f.firstSighting({ start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' }), ['prod/p-1', 'prod/p-3']);
      await expectMatches(f.firstSighting({ start: '2026-01-01T01:00:00+01:00', end: '2026-01-31T19:00:00-05:00' }), [
        'prod/p-1',
        'prod/p-3',
      ]);
      await expectMatches(f.firstSighting({ start: '2026-01-01T00:00:00.001Z', end: '2026-02-01T00:00:00.001Z' }), [
        'prod/p-2',
        'prod/p-3',
      ]);
      await expectMatches(f.firstSighting({ start: '2026-02-01T00:00:00Z' }), ['prod/p-2', 'prod/p-4']);
      await expectMatches(f.firstSighting({ end: '2026-01-01T00:00:00Z' }), OLD);
    });

    it('lastSighting is [start, end)', async () => {
      await expectMatches(f.lastSighting({ start: '2026-02-15T00:00:00Z' }), ['prod/p-2', 'prod/p-3', 'prod/p-4']);
      await expectMatches(f.lastSighting({ start: '2026-01-31T00:00:00Z', end: '2026-02-15T00:00:00Z' }), ['prod/p-1']);
      await expectMatches(f.lastSighting({ start: '2026-01-31T00:00:00.001Z', end: '2026-02-15T00:00:00.001Z' }), ['prod/p-2']);
      await expectMatches(f.lastSighting({ end: '2026-01-31T00:00:00Z' }), OLD);
      await expectMatches(f.lastSighting({ start: '2026-03-10T00:00:00.001Z' }), []);
    });

    it('sightedDuring: [firstSighting, lastSighting] overlaps [start, end], both ends inclusive', async () => {
      await expectMatches(f.sightedDuring('2026-01-31T00:00:00Z', '2026-02-01T00:00:00Z'), ['prod/p-1', 'prod/p-2', 'prod/p-3']);
      await expectMatches(f.sightedDuring('2026-03-01T00:00:00Z', '2026-03-01T00:00:00Z'), ['prod/p-3', 'prod/p-4']);
      await expectMatches(f.sightedDuring('2026-03-01T01:00:00+01:00', '2026-02-28T19:00:00-05:00'), ['prod/p-3', 'prod/p-4']);
      await expectMatches(f.sightedDuring('2026-03-02T00:00:00Z', '2026-03-10T00:00:00Z'), ['prod/p-4']);
      await expectMatches(f.sightedDuring('2026-03-10T00:00:00.001Z', '2027-01-01T00:00:00Z'), []);
    });
  });

  describe('loadLinks', () => {
    it('true: every match carries its outgoing links grouped by link id, {} when none', async () => {
      const res = await post({ filter: f.objectId('p-1', 'p-4', 'd-1', 'p-2'), loadLinks: true }).expect(200);
      expect(res.body).toEqual({
        objects: [
          { id: 'd-1', environmentId: 'prod', links: { madeBy: ['c-1'] } },
          { id: 'p-1', environmentId: 'prod', links: { knows: ['p-2'], worksFor: ['c-1'] } },
          { id: 'p-2', environmentId: 'prod', links: { knows: ['p-3'], owns: ['d-1'], worksFor: ['c-2'] } },
          { id: 'p-4', environmentId: 'prod', links: {} },
          { id: 'p-1', environmentId: 'staging', links: { knows: ['p-3'] } },
          { id: 'p-2', environmentId: 'staging', links: { owns: ['d-1'], worksFor: ['c-1'] } },
        ],
      });
    });

    it('false or absent: no links key at all', async () => {
      const expected = {
        objects: [
          { id: 'p-1', environmentId: 'prod' },
          { id: 'p-4', environmentId: 'prod' },
          { id: 'p-1', environmentId: 'staging' },
        ],
      };
      for (const body of [{ filter: f.objectId('p-1', 'p-4') }, { filter: f.objectId('p-1', 'p-4'), loadLinks: false }]) {
        const res = await post(body).expect(200);
        expect(res.body).toEqual(expected);
        for (const o of res.body.objects) expect(o).not.toHaveProperty('links');
      }
    });
  });

  describe('errors', () => {
    const invalid = async (filter: unknown, path: string) => {
      const res = await post(filter === undefined ? {} : { filter });
      expectError(res, 'InvalidFilter', { path, reason: expect.any(String) });
      expect(typeof (res.body.parameters as { reason: unknown }).reason).toBe('string');
    };

    it('filter missing, without type, unknown variant, missing or misnamed payload', async () => {
      await invalid(undefined, 'filter');
      await invalid(null, 'filter');
      await invalid({ all: {} }, 'filter.type');
      await invalid({ type: 'bogus', bogus: {} }, 'filter.type');
      await invalid({ type: 'objectType', objectId: { ids: ['p-1'] } }, 'filter.objectId');
      await invalid({ type: 'all' }, 'filter.all');
      await invalid({ type: 'all', all: {}, extra: 1 }, 'filter.extra');
    });

    it('empty and / or lists', async () => {
      await invalid(f.and(), 'filter.and.filters');
      await invalid(f.or(), 'filter.or.filters');
    });

    it('unknown property, object type and link ids', async () => {
      await invalid(f.eq('nope', 'x'), 'filter.propertyEquals.propertyId');
      await invalid(f.exists('nope'), 'filter.propertyExists.propertyId');
      await invalid(f.objectType('person', 'robot'), 'filter.objectType.types[1]');
      await invalid(f.hasLink('likes'), 'filter.hasLink.linkId');
      await invalid(f.linkedFrom('likes', f.all()), 'filter.linkedFrom.linkId');
      await invalid(f.origin('crm', 'nope'), 'filter.propertyOrigin.propertyId');
    });

    it('wrong value types and datetimes without offset', async () => {
      await invalid(f.eq('age', '36'), 'filter.propertyEquals.value');
      await invalid(f.eq('age', 36.5), 'filter.propertyEquals.value');
      await invalid(f.in('age', [1, 'two']), 'filter.propertyIn.values[1]');
      await invalid(f.eq('home', { lat: 1 }), 'filter.propertyEquals.value');
      await invalid(f.eq('born', '2026-02-30'), 'filter.propertyEquals.value');
      await invalid(f.eq('seenAt', '2026-03-01T10:00:00'), 'filter.propertyEquals.value');
      await invalid(f.range('seenAt', { gte: '2026-03-01T10:00:00' }), 'filter.propertyRange.gte');
      await invalid(f.firstSighting({ start: '2026-01-01T00:00:00' }), 'filter.firstSighting.start');
      await invalid(f.sightedDuring('2026-01-01T00:00:00Z', 'tomorrow'), 'filter.sightedDuring.end');
    });

    it('unknown fields inside a filter payload are InvalidFilter', async () => {
      await invalid({ type: 'propertyExists', propertyExists: { propertyId: 'name', extra: 1 } }, 'filter.propertyExists.extra');
      await invalid({ type: 'all', all: { x: 1 } }, 'filter.all.x');
      await invalid(f.and(f.all(), { type: 'tag', tag: { tags: ['vip'], mode: 'ALL' } }), 'filter.and.filters[1].tag.mode');
    });

    it('paths name the offending value inside nesting', async () => {
      await invalid(f.and(f.all(), f.not(f.eq('age', 'x'))), 'filter.and.filters[1].not.filter.propertyEquals.value');
      await invalid(
        f.linkedFrom('knows', f.linksTo('worksFor', f.eq('name', 1))),
        'filter.linkedFrom.source.linksTo.target.propertyEquals.value',
      );
    });

    it('depth: 32 levels are accepted, 33 are InvalidFilter', async () => {
      let ok: Filter = f.all();
      for (let i = 0; i < 31; i++) ok = f.not(ok); // depth 32, 31 negations → matches nothing
      await expectMatches(ok, []);
      const deep = f.not(ok); // depth 33
      await invalid(deep, `filter${'.not.filter'.repeat(32)}`);
    });

    it('nodes: 1000 are accepted, 1001 are InvalidFilter', async () => {
      const ok = f.or(...Array.from({ length: 999 }, (_, i) => (i === 500 ? f.objectId('c-2') : f.objectId(`none-${i}`))));
      await expectMatches(ok, ['prod/c-2']);
      const tooMany = f.or(...Array.from({ length: 1000 }, (_, i) => f.objectId(`none-${i}`)));
      await invalid(tooMany, 'filter.or.filters[999]');
    });

    it('lists: 10000 entries are accepted, 10001 are InvalidFilter', async () => {
      const ids = Array.from({ length: 10_000 }, (_, i) => `x-${i}`);
      await expectMatches(f.objectId(...ids.slice(0, 9_999), 'p-4'), ['prod/p-4']);
      await invalid(f.objectId(...ids, 'p-4'), 'filter.objectId.ids');
      await invalid(f.in('name', [...ids, 'Dave']), 'filter.propertyIn.values');
    });

    it('unknown top-level body fields and bad page sizes are InvalidArgument', async () => {
      expectError(await post({ filter: f.all(), extra: 1 }), 'InvalidArgument');
      expectError(await post({ filter: f.all(), loadLinks: 'yes' }), 'InvalidArgument');
      expectError(await post({ filter: f.all() }, { pageSize: 0 }), 'InvalidArgument', { field: 'pageSize' });
      expectError(await post({ filter: f.all() }, { pageSize: -3 }), 'InvalidArgument', { field: 'pageSize' });
      expectError(await post({ filter: f.all() }, { pageSize: 'ten' }), 'InvalidArgument', { field: 'pageSize' });
    });
  });
});

describe('POST /objects/search paging', () => {
  let t: TestObjectsApp;
  // 30 objects in two environments; 25 are tagged `hit` (every sixth is not).
  const all = [
    ...Array.from({ length: 15 }, (_, i) => ({ env: 'alpha', id: `o-${String(i).padStart(2, '0')}` })),
    ...Array.from({ length: 15 }, (_, i) => ({ env: 'beta', id: `o-${String(i).padStart(2, '0')}` })),
  ];
  const hits = all.filter((_, i) => i % 6 !== 5).map((o) => `${o.env}/${o.id}`);
  const HIT = f.tag(['hit']);

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    const objects = [...all]
      .reverse()
      .map((o) => obj(o.env, o.id, 'device', [['serial', o.id]], { tags: all.indexOf(o) % 6 === 5 ? ['miss'] : ['hit'] }));
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
    // Ids whose code-point order differs from UTF-16 order and from any linguistic collation.
    const order = ['😀', 'z', 'é', 'A', '\uFF01', '_', 'Z', 'a'].map((id) =>
      obj('order', id, 'device', [['serial', id === 'é' ? 'Émile Zola ÉCOLE' : `serial ${id}`]]),
    );
    await t.http().post('/objects/ingest').send({ objects: order }).expect(200);
  });
  afterAll(() => t?.close());

  it('orders ids by code point and pages through them one by one', async () => {
    const expected = ['A', 'Z', '_', 'a', 'z', 'é', '\uFF01', '😀'].map((id) => `order/${id}`);
    const single = await post({ filter: f.environment('order') }).expect(200);
    expect(keys(single.body)).toEqual(expected);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const res = await post({ filter: f.environment('order') }, { pageSize: 1, ...(token ? { pagingToken: token } : {}) }).expect(200);
      expect(res.body.objects).toHaveLength(1);
      seen.push(...keys(res.body));
      token = res.body.pagingToken;
      pages++;
    } while (token && pages < 20);
    expect(seen).toEqual(expected);
  });

  it('caseInsensitive prefix and text search lower-case non-ASCII letters', async () => {
    const inOrder = (filter: Filter) => post({ filter: f.and(f.environment('order'), filter) }).expect(200);
    expect(keys((await inOrder(f.prefix('serial', 'émile', true))).body)).toEqual(['order/é']);
    expect(keys((await inOrder(f.prefix('serial', 'émile'))).body)).toEqual([]);
    expect(keys((await inOrder(f.text('émile'))).body)).toEqual(['order/é']);
    expect(keys((await inOrder(f.text('école zola', { propertyId: 'serial', match: 'ANY_TERM' }))).body)).toEqual(['order/é']);
    expect(keys((await inOrder(f.text('zola école', { propertyId: 'serial', match: 'PHRASE' }))).body)).toEqual(['order/é']);
  });

  const post = (body: Record<string, unknown>, query: Record<string, unknown> = {}) =>
    t.http().post('/objects/search').query(query).send(body);

  it('sanity: 25 matches out of 30', () => {
    expect(hits).toHaveLength(25);
  });

  it('pages 10, 10, 5 with tokens, in order, without duplicates or gaps; the last page has no token', async () => {
    const sizes: number[] = [];
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const res = await post({ filter: HIT }, { pageSize: 10, ...(token ? { pagingToken: token } : {}) }).expect(200);
      sizes.push(res.body.objects.length);
      seen.push(...keys(res.body));
      token = res.body.pagingToken;
      if (sizes.length < 3) expect(token).toEqual(expect.any(String));
    } while (token && sizes.length < 10);
    expect(sizes).toEqual([10, 10, 5]);
    expect(seen).toEqual(hits);
    expect(new Set(seen).size).toBe(25);
  });

  it('an exact multiple of the page size ends without an empty page', async () => {
    const first = await post({ filter: HIT }, { pageSize: 5 }).expect(200);
    let token = first.body.pagingToken as string | undefined;
    const seen = keys(first.body);
    let pages = 1;
    while (token) {
      const res = await post({ filter: HIT }, { pageSize: 5, pagingToken: token }).expect(200);
      expect(res.body.objects.length).toBe(5);
      seen.push(...keys(res.body));
      token = res.body.pagingToken;
      pages++;
    }
    expect(pages).toBe(5);
    expect(seen).toEqual(hits);
  });

  it('pageSize may change between pages; loadLinks pages the same way', async () => {
    const first = await post({ filter: HIT, loadLinks: true }, { pageSize: 7 }).expect(200);
    expect(keys(first.body)).toEqual(hits.slice(0, 7));
    expect(first.body.objects[0]).toEqual({ id: 'o-00', environmentId: 'alpha', links: {} });
    const rest = await post({ filter: HIT, loadLinks: true }, { pageSize: 100, pagingToken: first.body.pagingToken }).expect(200);
    expect(keys(rest.body)).toEqual(hits.slice(7));
    expect(rest.body.pagingToken).toBeUndefined();
  });

  it('defaults to one page, and clamps a pageSize above 10000', async () => {
    const byDefault = await post({ filter: HIT }).expect(200);
    expect(keys(byDefault.body)).toEqual(hits);
    expect(byDefault.body.pagingToken).toBeUndefined();
    const clamped = await post({ filter: HIT }, { pageSize: 20_000 }).expect(200);
    expect(keys(clamped.body)).toEqual(hits);
    expect(clamped.body.pagingToken).toBeUndefined();
  });

  it('rejects a token reused with a different filter or loadLinks, a tampered token and garbage', async () => {
    const first = await post({ filter: HIT }, { pageSize: 10 }).expect(200);
    const token = first.body.pagingToken as string;
    expect(token).toEqual(expect.any(String));

    expectError(await post({ filter: f.tag(['miss']) }, { pagingToken: token }), 'InvalidPagingToken');
    expectError(await post({ filter: f.tag(['hit'], 'ALL') }, { pagingToken: token }), 'InvalidPagingToken');
    expectError(await post({ filter: HIT, loadLinks: true }, { pagingToken: token }), 'InvalidPagingToken');

    // Tamper with the position inside the token, keeping its signature.
    // (The format is opaque; this tampers with it whether or not it decodes as JSON.)
    const [payload, ...rest] = token.split('.');
    let forgedPayload: string;
    try {
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      forgedPayload = Buffer.from(JSON.stringify({ ...decoded, p: { env: 'alpha', id: 'o-00' } })).toString('base64url');
    } catch {
      const mid = Math.floor(payload.length / 2);
      forgedPayload = `${payload.slice(0, mid)}${payload[mid] === 'A' ? 'B' : 'A'}${payload.slice(mid + 1)}`;
    }
    expect(forgedPayload).not.toBe(payload);
    const forged = [forgedPayload, ...rest].join('.');
    expectError(await post({ filter: HIT }, { pagingToken: forged }), 'InvalidPagingToken');
    expectError(await post({ filter: HIT }, { pagingToken: `${token}x` }), 'InvalidPagingToken');
    expectError(await post({ filter: HIT }, { pagingToken: 'garbage' }), 'InvalidPagingToken');
    // The filter is checked first: a bad filter is InvalidFilter whatever the token.
    expectError(await post({ filter: { type: 'nope' } }, { pagingToken: 'garbage' }), 'InvalidFilter');

    // The untouched token still works with the same request.
    const second = await post({ filter: HIT }, { pageSize: 10, pagingToken: token }).expect(200);
    expect(keys(second.body)).toEqual(hits.slice(10, 20));
  });
});

/** Every filter variant once more, on a data set of its own with every property type and sightings. */
describe('POST /objects/search: every filter variant on real data', () => {
  type F = Record<string, unknown>;
  const v = (type: string, payload: unknown = {}): F => ({ type, [type]: payload });

  function obj(environmentId: string, id: string, type: string, props: [string, unknown, string?][], extra: F = {}) {
    return {
      environmentId,
      id,
      type,
      properties: props.map(([pid, value, origin]) => ({ id: pid, value, origin: origin ?? 'crm' })),
      ...extra,
    };
  }
  const seen = (first: string, last: string) => ({ metadata: { firstSighting: first, lastSighting: last } });

  const DATA = [
    obj(
      'prod',
      'p-1',
      'person',
      [
        ['name', 'Ada Lovelace'],
        ['email', 'ada@example.com'],
        ['email', 'ada@work.example', 'hr'],
        ['age', 36],
        ['score', 4.5],
        ['active', true],
        ['born', '1815-12-10'],
        ['seenAt', '2026-01-01T10:00:00Z'],
        ['home', { lat: 51.5, lon: -0.12 }],
      ],
      { tags: ['vip', 'math'], links: { worksFor: ['c-1'], knows: ['p-2'] }, ...seen('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z') },
    ),
    obj(
      'prod',
      'p-2',
      'person',
      [
        ['name', 'Alan Turing'],
        ['email', 'alan@example.com'],
        ['age', 41],
        ['score', 3.0],
        ['active', false],
        ['born', '1912-06-23'],
        ['seenAt', '2026-01-02T10:00:00+02:00'],
      ],
      { tags: ['vip'], links: { worksFor: ['c-2'], knows: ['p-3'] }, ...seen('2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z') },
    ),
    obj(
      'prod',
      'p-3',
      'person',
      [
        ['name', 'grace hopper'],
        ['age', 85],
        ['score', 5],
        ['active', true],
        ['born', '1906-12-09'],
      ],
      {
        tags: ['navy'],
        links: { worksFor: ['c-2'] },
        ...seen('2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'),
      },
    ),
    obj(
      'prod',
      'p-4',
      'person',
      [
        ['name', 'Ada_%Fake'],
        ['age', 20],
      ],
      seen('2026-01-15T00:00:00Z', '2026-01-20T00:00:00Z'),
    ),
    obj('prod', 'c-1', 'company', [['name', 'Analytical Engines Ltd']], seen('2026-06-01T00:00:00Z', '2026-06-02T00:00:00Z')),
    obj('prod', 'c-2', 'company', [['name', 'Bletchley Park']], seen('2026-06-01T00:00:00Z', '2026-06-02T00:00:00Z')),
    obj(
      'staging',
      'p-1',
      'person',
      [
        ['name', 'Ada Staging'],
        ['age', 36],
      ],
      { tags: ['vip'], ...seen('2026-05-01T00:00:00Z', '2026-05-02T00:00:00Z') },
    ),
  ];
  const ALL = ['prod/c-1', 'prod/c-2', 'prod/p-1', 'prod/p-2', 'prod/p-3', 'prod/p-4', 'staging/p-1'];

  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await t.http().post('/objects/ingest').send({ objects: DATA }).expect(200);
  });
  afterAll(() => t?.close());

  async function ids(filter: unknown): Promise<string[]> {
    const res = await t.http().post('/objects/search').send({ filter });
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    expect(res.body.pagingToken).toBeUndefined();
    return res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`);
  }
  const name = (value: string) => v('propertyEquals', { propertyId: 'name', value });

  it.each<[string, F, string[]]>([
    ['all', v('all'), ALL],
    ['objectType', v('objectType', { types: ['company'] }), ['prod/c-1', 'prod/c-2']],
    ['environment', v('environment', { environmentIds: ['staging'] }), ['staging/p-1']],
    ['objectId (any environment)', v('objectId', { ids: ['p-1', 'nope'] }), ['prod/p-1', 'staging/p-1']],
    // Empty id lists are taken (and documented so): nothing has one of no ids; ALL of no tags holds for every object.
    ['objectId with no ids: nothing', v('objectId', { ids: [] }), []],
    ['objectType with no types: nothing', v('objectType', { types: [] }), []],
    ['environment with no environments: nothing', v('environment', { environmentIds: [] }), []],
    ['tag ANY of no tags: nothing', v('tag', { tags: [] }), []],
    ['tag ALL of no tags: every object', v('tag', { tags: [], match: 'ALL' }), ALL],
    ['tag ANY (default)', v('tag', { tags: ['navy', 'math'] }), ['prod/p-1', 'prod/p-3']],
    ['tag ALL', v('tag', { tags: ['vip', 'math'], match: 'ALL' }), ['prod/p-1']],
    ['propertyExists', v('propertyExists', { propertyId: 'email' }), ['prod/p-1', 'prod/p-2']],
    ['propertyEquals string (case-sensitive)', name('Ada Lovelace'), ['prod/p-1']],
    ['propertyEquals string, other case', name('ada lovelace'), []],
    ['propertyEquals long', v('propertyEquals', { propertyId: 'age', value: 36 }), ['prod/p-1', 'staging/p-1']],
    ['propertyEquals double', v('propertyEquals', { propertyId: 'score', value: 3 }), ['prod/p-2']],
    ['propertyEquals boolean', v('propertyEquals', { propertyId: 'active', value: false }), ['prod/p-2']],
    ['propertyEquals date', v('propertyEquals', { propertyId: 'born', value: '1906-12-09' }), ['prod/p-3']],
    [
      'propertyEquals timestamp, other offset, same instant',
      v('propertyEquals', { propertyId: 'seenAt', value: '2026-01-01T11:00:00+01:00' }),
      ['prod/p-1'],
    ],
    [
      'propertyEquals timestamp stored with an offset',
      v('propertyEquals', { propertyId: 'seenAt', value: '2026-01-02T08:00:00Z' }),
      ['prod/p-2'],
    ],
    ['propertyEquals geopoint', v('propertyEquals', { propertyId: 'home', value: { lat: 51.5, lon: -0.12 } }), ['prod/p-1']],
    [
      'propertyEquals on a multi-valued property: any value',
      v('propertyEquals', { propertyId: 'email', value: 'ada@work.example' }),
      ['prod/p-1'],
    ],
    [
      'not(equals) on a multi-valued property: no value equals',
      v('not', { filter: v('propertyEquals', { propertyId: 'email', value: 'ada@example.com' }) }),
      ALL.filter((x) => x !== 'prod/p-1'),
    ],
    ['propertyIn', v('propertyIn', { propertyId: 'age', values: [41, 85, 99] }), ['prod/p-2', 'prod/p-3']],
    ['propertyRange long [36, 85)', v('propertyRange', { propertyId: 'age', gte: 36, lt: 85 }), ['prod/p-1', 'prod/p-2', 'staging/p-1']],
    ['propertyRange double (4.5, ∞)', v('propertyRange', { propertyId: 'score', gt: 4.5 }), ['prod/p-3']],
    ['propertyRange date', v('propertyRange', { propertyId: 'born', gt: '1900-01-01', lte: '1912-06-23' }), ['prod/p-2', 'prod/p-3']],
    [
      'propertyRange timestamp as instants',
      v('propertyRange', { propertyId: 'seenAt', gte: '2026-01-01T12:00:00+02:00', lt: '2026-01-02T08:00:00Z' }),
      ['prod/p-1'],
    ],
    [
      'propertyRange string by code point',
      v('propertyRange', { propertyId: 'name', gte: 'A', lt: 'B' }),
      ['prod/c-1', 'prod/p-1', 'prod/p-2', 'prod/p-4', 'staging/p-1'],
    ],
    ['propertyPrefix', v('propertyPrefix', { propertyId: 'name', prefix: 'Ada' }), ['prod/p-1', 'prod/p-4', 'staging/p-1']],
    ['propertyPrefix is case-sensitive by default', v('propertyPrefix', { propertyId: 'name', prefix: 'ada' }), []],
    [
      'propertyPrefix caseInsensitive',
      v('propertyPrefix', { propertyId: 'name', prefix: 'ADA', caseInsensitive: true }),
      ['prod/p-1', 'prod/p-4', 'staging/p-1'],
    ],
    ['propertyPrefix treats % and _ literally', v('propertyPrefix', { propertyId: 'name', prefix: 'Ada_%' }), ['prod/p-4']],
    ['propertyPrefix: _ is not a wildcard', v('propertyPrefix', { propertyId: 'name', prefix: 'A_a' }), []],
    [
      'propertyText ALL_TERMS (default), any order, any case',
      v('propertyText', { propertyId: 'name', query: 'LOVELACE ada' }),
      ['prod/p-1'],
    ],
    [
      'propertyText ANY_TERM',
      v('propertyText', { propertyId: 'name', query: 'turing hopper', match: 'ANY_TERM' }),
      ['prod/p-2', 'prod/p-3'],
    ],
    ['propertyText PHRASE', v('propertyText', { propertyId: 'name', query: 'ada lovelace', match: 'PHRASE' }), ['prod/p-1']],
    ['propertyText PHRASE in the wrong order', v('propertyText', { propertyId: 'name', query: 'lovelace ada', match: 'PHRASE' }), []],
    ['propertyText without propertyId: any string value', v('propertyText', { query: 'PARK' }), ['prod/c-2']],
    ['propertyText: one value must hold all terms', v('propertyText', { query: 'ada alan' }), []],
    ['propertyOrigin', v('propertyOrigin', { origin: 'hr' }), ['prod/p-1']],
    ['propertyOrigin with propertyId', v('propertyOrigin', { origin: 'crm', propertyId: 'email' }), ['prod/p-1', 'prod/p-2']],
    ['hasLink', v('hasLink', { linkId: 'worksFor' }), ['prod/p-1', 'prod/p-2', 'prod/p-3']],
    ['hasLink to targets', v('hasLink', { linkId: 'worksFor', targetIds: ['c-2'] }), ['prod/p-2', 'prod/p-3']],
    ['linkedFrom', v('linkedFrom', { linkId: 'worksFor', source: name('Ada Lovelace') }), ['prod/c-1']],
    ['linksTo', v('linksTo', { linkId: 'worksFor', target: v('objectId', { ids: ['c-2'] }) }), ['prod/p-2', 'prod/p-3']],
    [
      'link filters nested two levels',
      v('linkedFrom', { linkId: 'knows', source: v('linksTo', { linkId: 'worksFor', target: name('Analytical Engines Ltd') }) }),
      ['prod/p-2'],
    ],
    [
      'firstSighting [start, end): start included, end excluded',
      v('firstSighting', { start: '2026-01-01T00:00:00Z', end: '2026-02-01T00:00:00Z' }),
      ['prod/p-1', 'prod/p-4'],
    ],
    [
      'lastSighting with only start',
      v('lastSighting', { start: '2026-04-01T00:00:00Z' }),
      ['prod/c-1', 'prod/c-2', 'prod/p-3', 'staging/p-1'],
    ],
    ['lastSighting with only end', v('lastSighting', { end: '2026-02-01T00:00:00Z' }), ['prod/p-4']],
    ['sightedDuring', v('sightedDuring', { start: '2026-01-16T00:00:00Z', end: '2026-01-17T00:00:00Z' }), ['prod/p-1', 'prod/p-4']],
    ['and', v('and', { filters: [v('tag', { tags: ['vip'] }), v('environment', { environmentIds: ['prod'] })] }), ['prod/p-1', 'prod/p-2']],
    [
      'or',
      v('or', { filters: [v('objectType', { types: ['company'] }), v('tag', { tags: ['navy'] })] }),
      ['prod/c-1', 'prod/c-2', 'prod/p-3'],
    ],
    ['not', v('not', { filter: v('objectType', { types: ['person'] }) }), ['prod/c-1', 'prod/c-2']],
  ])('%s', async (_name, filter, expected) => {
    expect(await ids(filter)).toEqual(expected);
  });

  it('loadLinks: outgoing links grouped by link id, {} when none; absent without loadLinks', async () => {
    const filter = v('objectId', { ids: ['p-1', 'c-1'] });
    const withLinks = await t.http().post('/objects/search').send({ filter, loadLinks: true }).expect(200);
    expect(withLinks.body).toEqual({
      objects: [
        { id: 'c-1', environmentId: 'prod', links: {} },
        { id: 'p-1', environmentId: 'prod', links: { knows: ['p-2'], worksFor: ['c-1'] } },
        { id: 'p-1', environmentId: 'staging', links: {} },
      ],
    });
    const without = await t.http().post('/objects/search').send({ filter, loadLinks: false }).expect(200);
    expect(without.body.objects).toEqual([
      { id: 'c-1', environmentId: 'prod' },
      { id: 'p-1', environmentId: 'prod' },
      { id: 'p-1', environmentId: 'staging' },
    ]);
  });

  it('pages by (environmentId, id) with tokens: full pages, no repeats, no skips, no token on the last page', async () => {
    const objects = Array.from({ length: 25 }, (_, i) => obj('paging', `x-${String(i).padStart(2, '0')}`, 'company', [['name', `n${i}`]]));
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
    const filter = v('environment', { environmentIds: ['paging'] });
    const got: string[] = [];
    const sizes: number[] = [];
    let token: string | undefined;
    do {
      const res = await t
        .http()
        .post('/objects/search')
        .query({ pageSize: 10, ...(token ? { pagingToken: token } : {}) })
        .send({ filter })
        .expect(200);
      sizes.push(res.body.objects.length);
      got.push(...res.body.objects.map((o: { id: string }) => o.id));
      token = res.body.pagingToken;
    } while (token);
    expect(sizes).toEqual([10, 10, 5]);
    expect(got).toEqual(objects.map((o) => o.id));
    // Exactly a multiple of the page size: the last full page carries no token.
    const exact = await t.http().post('/objects/search?pageSize=25').send({ filter }).expect(200);
    expect(exact.body.objects).toHaveLength(25);
    expect(exact.body.pagingToken).toBeUndefined();
    await t.http().post('/objects/search?pageSize=50000').send({ filter }).expect(200);
  });

  it('rejects tokens from another request and tampered tokens', async () => {
    const filter = v('environment', { environmentIds: ['paging'] });
    const first = await t.http().post('/objects/search?pageSize=5').send({ filter }).expect(200);
    const token = first.body.pagingToken as string;
    await t.http().post('/objects/search').query({ pageSize: 7, pagingToken: token }).send({ filter }).expect(200);
    const other = await t
      .http()
      .post('/objects/search')
      .query({ pagingToken: token })
      .send({ filter: v('all') })
      .expect(400);
    expect(other.body.errorName).toBe('InvalidPagingToken');
    const links = await t.http().post('/objects/search').query({ pagingToken: token }).send({ filter, loadLinks: true }).expect(400);
    expect(links.body.errorName).toBe('InvalidPagingToken');
    const tampered = await t
      .http()
      .post('/objects/search')
      .query({ pagingToken: `x${token}` })
      .send({ filter })
      .expect(400);
    expect(tampered.body.errorName).toBe('InvalidPagingToken');
  });

  const deep = (n: number): F => (n <= 1 ? v('all') : v('not', { filter: deep(n - 1) }));
  it.each<[string, unknown, string]>([
    ['a missing filter', undefined, 'filter'],
    ['a filter without type', { all: {} }, 'filter.type'],
    ['an unknown variant', v('fuzzy', {}), 'filter.type'],
    ['a payload key different from type', { type: 'tag', all: {} }, 'filter.all'],
    ['an empty and', v('and', { filters: [] }), 'filter.and.filters'],
    ['an empty or', v('or', { filters: [] }), 'filter.or.filters'],
    ['an unknown property', v('propertyExists', { propertyId: 'nope' }), 'filter.propertyExists.propertyId'],
    ['an unknown object type', v('objectType', { types: ['person', 'robot'] }), 'filter.objectType.types[1]'],
    ['an unknown link type', v('hasLink', { linkId: 'likes' }), 'filter.hasLink.linkId'],
    ['a string for a long', v('propertyEquals', { propertyId: 'age', value: '36' }), 'filter.propertyEquals.value'],
    [
      'a datetime without an offset',
      v('propertyEquals', { propertyId: 'seenAt', value: '2026-01-01T10:00:00' }),
      'filter.propertyEquals.value',
    ],
    ['a sighting without an offset', v('firstSighting', { start: '2026-01-01T00:00:00' }), 'filter.firstSighting.start'],
    ['an unknown field in a payload', v('tag', { tags: ['x'], mode: 'ANY' }), 'filter.tag.mode'],
    [
      'a nested fault',
      v('and', { filters: [v('all'), v('not', { filter: v('propertyEquals', { propertyId: 'age', value: 'x' }) })] }),
      'filter.and.filters[1].not.filter.propertyEquals.value',
    ],
    ['depth 33', deep(33), `filter${'.not.filter'.repeat(32)}`],
    ['more than 1000 nodes', v('or', { filters: Array.from({ length: 1000 }, () => v('all')) }), 'filter.or.filters[999]'],
    ['a list over 10,000 entries', v('objectId', { ids: Array.from({ length: 10_001 }, (_, i) => `i${i}`) }), 'filter.objectId.ids'],
  ])('400 InvalidFilter for %s', async (_name, filter, path) => {
    const res = await t
      .http()
      .post('/objects/search')
      .send(filter === undefined ? {} : { filter })
      .expect(400);
    expect(res.body).toMatchObject({
      errorCode: 'INVALID_ARGUMENT',
      errorName: 'InvalidFilter',
      parameters: { path, reason: expect.any(String) },
    });
  });

  it('accepts depth 32 and 1000 nodes', async () => {
    await t
      .http()
      .post('/objects/search')
      .send({ filter: deep(32) })
      .expect(200);
    await t
      .http()
      .post('/objects/search')
      .send({ filter: v('or', { filters: Array.from({ length: 999 }, () => v('all')) }) })
      .expect(200);
  });

  it('400 InvalidArgument for an unknown body field and bad page sizes', async () => {
    expect(
      (
        await t
          .http()
          .post('/objects/search')
          .send({ filter: v('all'), extra: 1 })
          .expect(400)
      ).body.errorName,
    ).toBe('InvalidArgument');
    expect(
      (
        await t
          .http()
          .post('/objects/search')
          .send({ filter: v('all'), loadLinks: 'yes' })
          .expect(400)
      ).body.errorName,
    ).toBe('InvalidArgument');
    expect(
      (
        await t
          .http()
          .post('/objects/search?pageSize=0')
          .send({ filter: v('all') })
          .expect(400)
      ).body,
    ).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'pageSize' } });
  });
});
