import fc from 'fast-check';
import { ObjectSearchFilter } from '@app/domain';
import {
  compareCodePoints,
  evaluableInMemory,
  evaluableWithNeighbours,
  evaluate,
  Neighbours,
  ObjectRows,
} from '../../apps/objects/src/live-sets/filter-evaluator';
import { OBJECT_ROWS_AT_SQL, objectRows, ObjectRowsRow } from '../../apps/objects/src/live-sets/set-changes.sql';
import { startObjectsApp, TestObjectsApp } from '../support/apps';
import { testOntologyIndex, WRITE_ONTOLOGY } from '../support/ontologies';

/**
 * Live sets decide filters that read only the object itself in memory, on the object's rows
 * before and at each instant (docs/api.md §12 "Cost"). That must be exactly what the compiled SQL
 * answers. Here: random objects with every property type (multi-valued, several origins, tags,
 * links, sightings), random such filters nested with and / or / not, and for each the objects
 * the in-memory evaluation accepts on the rows live sets read (OBJECT_ROWS_AT_SQL) against
 * POST /objects/search on the same objects.
 */

const ENVS = ['prod', 'dev'];
const IDS = ['o-0', 'o-1', 'o-2', 'o-3', 'o-4', 'o-5', 'o-6', 'o-7'];
const TAGS = ['a', 'b', 'c'];
const ORIGINS = ['crm', 'hr'];
// Strings that sort differently by UTF-16 unit and by code point (U+FFFD < U+1F600), a prefix of another, LIKE's metacharacters.
const STRINGS = ['ada', 'Ada', 'adam', 'a_b', 'a%b', 'zeta', '\uFFFD', '\u{1F600}', 'é', ''];
const NUMBERS = [-1.5, 0, 2, 2.5, 41, 1e9];
const LONGS = [-3, 0, 2, 41, 1000];
const DATES = ['1815-12-10', '1912-06-23', '2026-01-01', '2026-12-31'];
const TIMES = ['2026-01-01T10:00:00Z', '2026-01-01T12:00:00+02:00', '2026-01-01T10:00:00.001Z', '2025-06-30T23:59:59.999Z'];
const POINTS = [
  { lat: 51.5, lon: -0.12 },
  { lat: -33.9, lon: 151.2 },
];
const SIGHTINGS = ['2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z', '2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'];

const PROPERTIES: Record<string, readonly unknown[]> = {
  name: STRINGS,
  email: STRINGS,
  age: LONGS,
  score: NUMBERS,
  active: [true, false],
  born: DATES,
  seenAt: TIMES,
  home: POINTS,
};

const objectArb = fc.record({
  env: fc.constantFrom(...ENVS),
  id: fc.constantFrom(...IDS),
  type: fc.constantFrom('person', 'company'),
  tags: fc.subarray(TAGS),
  values: fc.array(fc.tuple(fc.constantFrom(...Object.keys(PROPERTIES)), fc.nat(100), fc.constantFrom(...ORIGINS)), { maxLength: 8 }),
  worksFor: fc.subarray(IDS, { maxLength: 2 }),
  knows: fc.subarray(IDS, { maxLength: 2 }),
  first: fc.nat(2),
});

const pick = <T>(list: readonly T[]) => fc.constantFrom(...list);
const v = (type: string, payload: unknown) => ({ type, [type]: payload }) as unknown as ObjectSearchFilter;
const propertyValue = fc.constantFrom(...Object.keys(PROPERTIES)).chain((p) => fc.tuple(fc.constant(p), pick(PROPERTIES[p])));
const rangeBound = fc
  .constantFrom('name', 'email', 'age', 'score', 'born', 'seenAt')
  .chain((p) => fc.tuple(fc.constant(p), pick(PROPERTIES[p]), pick(PROPERTIES[p])));

const leaf: fc.Arbitrary<ObjectSearchFilter> = fc.oneof(
  fc.constant(v('all', {})),
  fc.subarray(['person', 'company']).map((types) => v('objectType', { types })),
  fc.subarray(ENVS).map((environmentIds) => v('environment', { environmentIds })),
  fc.subarray(IDS, { maxLength: 3 }).map((ids) => v('objectId', { ids })),
  fc
    .tuple(fc.subarray(TAGS), fc.constantFrom('ANY', 'ALL', undefined))
    .map(([tags, match]) => v('tag', { tags, ...(match ? { match } : {}) })),
  fc.constantFrom(...Object.keys(PROPERTIES)).map((propertyId) => v('propertyExists', { propertyId })),
  propertyValue.map(([propertyId, value]) => v('propertyEquals', { propertyId, value })),
  fc
    .constantFrom(...Object.keys(PROPERTIES))
    .chain((p) =>
      fc
        .subarray([...PROPERTIES[p]], { minLength: 1, maxLength: Math.min(3, PROPERTIES[p].length) })
        .map((values) => v('propertyIn', { propertyId: p, values })),
    ),
  fc
    .tuple(rangeBound, fc.subarray(['gt', 'gte', 'lt', 'lte'], { minLength: 1, maxLength: 2 }))
    .map(([[propertyId, a, b], ops]) => v('propertyRange', { propertyId, ...Object.fromEntries(ops.map((op, i) => [op, i ? b : a])) })),
  fc
    .tuple(fc.constantFrom('name', 'email'), pick(['a', 'ad', 'A', 'a_', 'a%', '\uFFFD', '\u{1F600}', 'z']))
    .map(([propertyId, prefix]) => v('propertyPrefix', { propertyId, prefix })),
  fc
    .tuple(pick(ORIGINS), fc.option(fc.constantFrom(...Object.keys(PROPERTIES)), { nil: undefined }))
    .map(([origin, propertyId]) => v('propertyOrigin', { origin, ...(propertyId ? { propertyId } : {}) })),
  fc
    .tuple(fc.constantFrom('worksFor', 'knows'), fc.option(fc.subarray(IDS, { maxLength: 2 }), { nil: undefined }))
    .map(([linkId, targetIds]) => v('hasLink', { linkId, ...(targetIds ? { targetIds } : {}) })),
  fc
    .tuple(
      fc.constantFrom('firstSighting', 'lastSighting'),
      fc.option(pick(SIGHTINGS), { nil: undefined }),
      fc.option(pick(SIGHTINGS), { nil: undefined }),
    )
    .filter(([, start, end]) => start !== undefined || end !== undefined)
    .map(([type, start, end]) => v(type, { ...(start ? { start } : {}), ...(end ? { end } : {}) })),
  fc.tuple(pick(SIGHTINGS), pick(SIGHTINGS)).map(([start, end]) => v('sightedDuring', { start, end })),
);
const filterArb: fc.Arbitrary<ObjectSearchFilter> = fc.letrec<{ f: ObjectSearchFilter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('f'), { minLength: 1, maxLength: 3 }).map((filters) => v('and', { filters })),
    fc.array(tie('f'), { minLength: 1, maxLength: 3 }).map((filters) => v('or', { filters })),
    tie('f').map((filter) => v('not', { filter })),
  ),
})).f;

/** Filters with link traversals one hop deep (over filters without links), nested in and / or / not. */
const linkedArb: fc.Arbitrary<ObjectSearchFilter> = fc.letrec<{ f: ObjectSearchFilter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(fc.constantFrom('worksFor', 'knows'), filterArb).map(([linkId, source]) => v('linkedFrom', { linkId, source })),
    fc.tuple(fc.constantFrom('worksFor', 'knows'), filterArb).map(([linkId, target]) => v('linksTo', { linkId, target })),
    fc.array(tie('f'), { minLength: 1, maxLength: 3 }).map((filters) => v('and', { filters })),
    fc.array(tie('f'), { minLength: 1, maxLength: 3 }).map((filters) => v('or', { filters })),
    tie('f').map((filter) => v('not', { filter })),
  ),
})).f;

describe('live sets: filters decided in memory agree with the compiled SQL', () => {
  let t: TestObjectsApp;
  const rows = new Map<string, ObjectRows>();
  const ontology = testOntologyIndex();

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = fc.sample(fc.uniqueArray(objectArb, { minLength: 12, maxLength: 16, selector: (o) => `${o.env}/${o.id}` }), {
      numRuns: 1,
      seed: 7,
    })[0];
    // And one person with a value of every property (of every column), two emails.
    objects.push({
      env: 'dev',
      id: 'all-values',
      type: 'person',
      tags: ['a'],
      values: Object.keys(PROPERTIES)
        .map((p, k) => [p, k, ORIGINS[k % 2]] as [string, number, string])
        .concat([['email', 7, 'crm']]),
      worksFor: [],
      knows: ['o-1'],
      first: 1,
    });
    // And two names that JavaScript's `<` orders otherwise than PostgreSQL's C collation.
    for (const [id, k] of [
      ['fffd', 6],
      ['emoji', 7],
    ] as const)
      objects.push({ env: 'prod', id, type: 'company', tags: [], values: [['name', k, 'crm']], worksFor: [], knows: [], first: 0 });
    const body = objects.map((o) => {
      // A company has only `name`; a single-valued property keeps its first value.
      const allowed = o.type === 'company' ? ['name'] : Object.keys(PROPERTIES);
      const taken = new Set<string>();
      const properties = o.values
        .filter(([p]) => allowed.includes(p) && (p === 'email' || (!taken.has(p) && taken.add(p))))
        .map(([p, k, origin]) => ({ id: p, value: PROPERTIES[p][k % PROPERTIES[p].length], origin }));
      return {
        environmentId: o.env,
        id: o.id,
        type: o.type,
        properties,
        tags: o.tags,
        links:
          o.type === 'person'
            ? { ...(o.worksFor.length ? { worksFor: o.worksFor } : {}), ...(o.knows.length ? { knows: o.knows } : {}) }
            : {},
        metadata: { firstSighting: SIGHTINGS[o.first], lastSighting: SIGHTINGS[o.first + 1] },
      };
    });
    await t.http().post('/objects/ingest').send({ objects: body }).expect(200);
    const now = new Date(Date.now() + 1000).toISOString();
    const keys = body.map((o) => [o.environmentId, o.id]);
    const res = await t.db.query<ObjectRowsRow>(OBJECT_ROWS_AT_SQL, [
      keys.map((_, n) => n),
      keys.map((k) => k[0]),
      keys.map((k) => k[1]),
      keys.map(() => now),
    ]);
    for (const r of res.rows) {
      const [env, id] = keys[r.n];
      rows.set(`${env}/${id}`, objectRows(env, id, r));
    }
    expect(rows.size).toBe(body.length);
  });
  afterAll(() => t?.close());

  it('reads the rows of every type of value as they are stored', () => {
    const all = [...rows.values()].flatMap((o) => o.values);
    for (const column of ['string', 'number', 'boolean', 'date', 'timestampUs', 'geo'] as const)
      expect(all.some((x) => x[column] !== null)).toBe(true);
    // Timestamps as instants in microseconds whatever their offset: 12:00+02:00 is 10:00Z.
    const seen = all.filter((x) => x.propertyId === 'seenAt').map((x) => x.timestampUs);
    for (const us of seen) expect(TIMES.map((s) => Date.parse(s) * 1000)).toContain(us);
  });

  it('compares strings by code point, as the C collation does', () => {
    expect(compareCodePoints('\uFFFD', '\u{1F600}')).toBeLessThan(0);
    expect('\uFFFD' < '\u{1F600}').toBe(false); // what JavaScript's own comparison would get wrong
    expect(compareCodePoints('ada', 'adam')).toBeLessThan(0);
    expect(compareCodePoints('Ada', 'ada')).toBeLessThan(0);
    expect(compareCodePoints('é', 'zeta')).toBeGreaterThan(0);
  });

  /** Every object's rows and the links into each: what a round reads around its candidates. */
  const around: Neighbours = {
    rows: (env, id) => rows.get(`${env}/${id}`),
    incoming: (env, id) =>
      [...rows.values()]
        .filter((o) => o.environmentId === env)
        .flatMap((o) => o.links.filter((l) => l.targetId === id).map((l) => ({ linkId: l.linkId, sourceId: o.id }))),
  };

  /** Whether the in-memory decision agrees with the search (false: the search refused the filter). */
  async function agree(filter: ObjectSearchFilter): Promise<boolean> {
    expect(evaluableWithNeighbours(filter)).toBe(true);
    const res = await t.http().post('/objects/search').query({ pageSize: 500 }).send({ filter });
    // A filter the validator refuses (a value that fits no column of the property) is not one live sets evaluate.
    if (res.status !== 200) return false;
    const found = (res.body.objects as { environmentId: string; id: string }[]).map((o) => `${o.environmentId}/${o.id}`).sort();
    const decided = [...rows.entries()]
      .filter(([, o]) => evaluate(filter, ontology, o, around))
      .map(([k]) => k)
      .sort();
    expect({ filter, objects: decided }).toEqual({ filter, objects: found });
    return true;
  }

  it('orders strings in ranges by code point', async () => {
    for (const op of ['gt', 'gte', 'lt', 'lte']) {
      for (const bound of ['\uFFFD', '\u{1F600}']) expect(await agree(v('propertyRange', { propertyId: 'name', [op]: bound }))).toBe(true);
    }
    const above = (
      await t
        .http()
        .post('/objects/search')
        .send({ filter: v('propertyRange', { propertyId: 'name', gt: '\uFFFD' }) })
        .expect(200)
    ).body.objects;
    expect(above.map((o: { id: string }) => o.id)).toContain('emoji');
  });

  it('accepts exactly the objects POST /objects/search finds, for random filters', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(filterArb, async (filter) => {
        const ok = await agree(filter);
        fc.pre(ok);
        compared++;
      }),
      { numRuns: 300, seed: Number(process.env.FC_SEED ?? Date.now() % 100000) },
    );
    expect(compared).toBeGreaterThan(200);
  }, 120_000);

  it('follows links one hop deep as the search does, for random filters', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(linkedArb, async (filter) => {
        const ok = await agree(filter);
        fc.pre(ok);
        compared++;
      }),
      { numRuns: 200, seed: Number(process.env.FC_SEED ?? Date.now() % 100000) },
    );
    expect(compared).toBeGreaterThan(120);
  }, 120_000);

  it('leaves deeper link traversals, full text and case-insensitive prefixes to SQL', () => {
    expect(
      evaluableWithNeighbours(v('linkedFrom', { linkId: 'knows', source: v('linksTo', { linkId: 'knows', target: v('all', {}) }) })),
    ).toBe(false);
    expect(evaluableWithNeighbours(v('linkedFrom', { linkId: 'knows', source: v('all', {}) }))).toBe(true);
  });

  it('leaves link traversals, full text and case-insensitive prefixes to SQL', () => {
    expect(evaluableInMemory(v('linkedFrom', { linkId: 'knows', source: v('all', {}) }))).toBe(false);
    expect(evaluableInMemory(v('and', { filters: [v('all', {}), v('linksTo', { linkId: 'knows', target: v('all', {}) })] }))).toBe(false);
    expect(evaluableInMemory(v('propertyText', { query: 'ada' }))).toBe(false);
    expect(evaluableInMemory(v('propertyPrefix', { propertyId: 'name', prefix: 'a', caseInsensitive: true }))).toBe(false);
    expect(evaluableInMemory(v('not', { filter: v('propertyPrefix', { propertyId: 'name', prefix: 'a' }) }))).toBe(true);
  });
});
