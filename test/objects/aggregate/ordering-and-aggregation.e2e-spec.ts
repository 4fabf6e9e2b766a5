import { bearer, JWT_ENV, token } from '../../support/tokens';
import { startBothApps, TestBothApps } from '../../support/apps';
import { extendOntology } from '../../support/ontologies';

/**
 * docs/api.md §9 on real data, through both apps (JWT on, so visibility is exercised): ordered
 * search and its keyset paging, POST /objects/aggregate with every bucket and metric, and
 * POST /object-sets/{id}/aggregate for a set built from other sets.
 */
const ONTOLOGY = extendOntology({ properties: { company: [{ id: 'employees', type: 'long' }] } });

type Prop = [string, unknown];
const obj = (environmentId: string, id: string, type: string, props: Prop[], firstSighting = '2026-01-01T00:00:00Z') => ({
  environmentId,
  id,
  type,
  properties: props.map(([pid, value]) => ({ id: pid, value, origin: 'crm' })),
  metadata: { firstSighting, lastSighting: '2026-06-01T00:00:00Z' },
});

const OBJECTS = [
  obj('prod', 'p-1', 'person', [
    ['name', 'Ada'],
    ['age', 36],
    ['score', 9.5],
    ['active', true],
    ['born', '1815-12-10'],
    ['seenAt', '2026-03-01T10:00:00Z'],
    ['home', { lat: 51.5, lon: -0.12 }],
    ['email', 'a@x'],
    ['email', 'b@x'],
  ]),
  // Monday 00:00 UTC: the first instant of a week.
  obj('prod', 'p-2', 'person', [
    ['name', 'Bob'],
    ['age', 41],
    ['score', 7.25],
    ['active', false],
    ['born', '1990-01-01'],
    ['seenAt', '2026-03-02T00:00:00Z'],
    ['email', 'b@x'],
  ]),
  // The last millisecond of February (UTC).
  obj(
    'prod',
    'p-3',
    'person',
    [
      ['name', 'Cy'],
      ['age', -3],
      ['score', 1.5],
      ['active', true],
      ['born', '2000-02-29'],
      ['seenAt', '2026-02-28T23:59:59.999Z'],
    ],
    '2026-01-02T12:00:00Z',
  ),
  // March 1st in +01:00 is still February in UTC; the same email twice counts once.
  obj('prod', 'p-4', 'person', [
    ['name', 'Dee'],
    ['seenAt', '2026-03-01T00:00:00+01:00'],
    ['email', 'c@x'],
    ['email', 'c@x'],
  ]),
  obj('prod', 'c-1', 'company', [
    ['name', 'Acme'],
    ['employees', 10],
  ]),
  obj('dev', 'p-5', 'person', [
    ['name', 'Ada'],
    ['age', 36],
    ['score', 3],
    ['active', false],
    ['email', 'a@x'],
  ]),
  obj('dev', 'c-2', 'company', [
    ['name', 'Acme'],
    ['employees', 25],
  ]),
];
const key = (o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`;
const COUNT = { type: 'count', count: {} };
const f = {
  all: { type: 'all', all: {} },
  env: (...environmentIds: string[]) => ({ type: 'environment', environment: { environmentIds } }),
  type: (...types: string[]) => ({ type: 'objectType', objectType: { types } }),
  and: (...filters: unknown[]) => ({ type: 'and', and: { filters } }),
};

describe('ordering and aggregation (docs/api.md §9)', () => {
  let t: TestBothApps;
  let all: Record<string, string>;
  let prodOnly: Record<string, string>;

  beforeAll(async () => {
    t = await startBothApps(JWT_ENV);
    all = bearer(await token('ada', ['*'], { roles: ['ontology-admin'] }));
    prodOnly = bearer(await token('bob', ['prod']));
    await t.objectsHttp().put('/ontology').set(all).send(ONTOLOGY).expect(200);
    await t.objectsHttp().post('/objects/ingest').set(all).send({ objects: OBJECTS }).expect(200);
  });
  afterAll(() => t?.close());

  const search = (body: Record<string, unknown>, query: Record<string, unknown> = {}, auth = all) =>
    t.objectsHttp().post('/objects/search').query(query).set(auth).send(body);
  const aggregate = async (body: Record<string, unknown>, auth = all) => {
    const res = await t.objectsHttp().post('/objects/aggregate').set(auth).send(body);
    if (res.status !== 200) throw new Error(`aggregate ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body as { groups: { key: Record<string, unknown>; metrics: Record<string, unknown> }[]; truncated: boolean };
  };
  const expectFault = async (path: string, body: Record<string, unknown>, errorName: string, faultPath: string) => {
    const res = await t.objectsHttp().post(path).set(all).send(body).expect(400);
    expect({ errorName: res.body.errorName, path: res.body.parameters.path }).toEqual({ errorName, path: faultPath });
  };

  describe('ordered search', () => {
    const ordered = async (orderBy: unknown, filter: unknown = f.all, auth = all) => {
      const res = await search({ filter, orderBy }, {}, auth).expect(200);
      expect(res.body.pagingToken).toBeUndefined();
      return res.body.objects.map(key);
    };

    it('a long property DESC: ties by (environmentId, id) ascending, objects without a value last', async () => {
      expect(await ordered([{ propertyId: 'age', direction: 'DESC' }])).toEqual([
        'prod/p-2',
        'dev/p-5',
        'prod/p-1',
        'prod/p-3',
        'dev/c-2',
        'prod/c-1',
        'prod/p-4',
      ]);
    });

    it('ASC is the default; missing values still come last', async () => {
      expect(await ordered([{ propertyId: 'age' }])).toEqual([
        'prod/p-3',
        'dev/p-5',
        'prod/p-1',
        'prod/p-2',
        'dev/c-2',
        'prod/c-1',
        'prod/p-4',
      ]);
    });

    it('a multi-valued property sorts by its smallest value ASC and its largest DESC', async () => {
      // Smallest: p-1 a@x, p-5 a@x, p-2 b@x, p-4 c@x. Largest: p-4 c@x, p-1 b@x, p-2 b@x, p-5 a@x.
      expect(await ordered([{ propertyId: 'email' }], f.type('person'))).toEqual([
        'dev/p-5',
        'prod/p-1',
        'prod/p-2',
        'prod/p-4',
        'prod/p-3',
      ]);
      expect(await ordered([{ propertyId: 'email', direction: 'DESC' }], f.type('person'))).toEqual([
        'prod/p-4',
        'prod/p-1',
        'prod/p-2',
        'dev/p-5',
        'prod/p-3',
      ]);
    });

    it('strings by code point, timestamps as instants, dates, doubles and booleans', async () => {
      expect(await ordered([{ propertyId: 'name', direction: 'DESC' }])).toEqual([
        'prod/p-4',
        'prod/p-3',
        'prod/p-2',
        'dev/p-5',
        'prod/p-1',
        'dev/c-2',
        'prod/c-1',
      ]);
      // 2026-02-28T23:00Z (p-4, given as +01:00) < 23:59:59.999Z (p-3) < 2026-03-01T10:00Z (p-1) < 03-02 (p-2)
      expect(await ordered([{ propertyId: 'seenAt' }], f.type('person'))).toEqual([
        'prod/p-4',
        'prod/p-3',
        'prod/p-1',
        'prod/p-2',
        'dev/p-5',
      ]);
      expect(await ordered([{ propertyId: 'born', direction: 'DESC' }], f.type('person'))).toEqual([
        'prod/p-3',
        'prod/p-2',
        'prod/p-1',
        'dev/p-5',
        'prod/p-4',
      ]);
      expect(await ordered([{ propertyId: 'score' }], f.type('person'))).toEqual([
        'prod/p-3',
        'dev/p-5',
        'prod/p-2',
        'prod/p-1',
        'prod/p-4',
      ]);
      expect(await ordered([{ propertyId: 'active', direction: 'DESC' }, { propertyId: 'age' }], f.type('person'))).toEqual([
        'prod/p-3',
        'prod/p-1',
        'dev/p-5',
        'prod/p-2',
        'prod/p-4',
      ]);
    });

    it('attributes, and up to three keys', async () => {
      expect(
        await ordered([
          { attribute: 'type', direction: 'DESC' },
          { propertyId: 'name' },
          { attribute: 'environmentId', direction: 'DESC' },
        ]),
      ).toEqual(['prod/p-1', 'dev/p-5', 'prod/p-2', 'prod/p-3', 'prod/p-4', 'prod/c-1', 'dev/c-2']);
      expect(
        await ordered([
          { attribute: 'firstSighting', direction: 'DESC' },
          { attribute: 'id', direction: 'DESC' },
        ]),
      ).toEqual(['prod/p-3', 'dev/p-5', 'prod/p-4', 'prod/p-2', 'prod/p-1', 'dev/c-2', 'prod/c-1']);
      expect(await ordered([{ attribute: 'environmentId' }])).toEqual([
        'dev/c-2',
        'dev/p-5',
        'prod/c-1',
        'prod/p-1',
        'prod/p-2',
        'prod/p-3',
        'prod/p-4',
      ]);
    });

    it('visibility applies: a caller who sees prod only gets prod only, in order', async () => {
      expect(await ordered([{ propertyId: 'age', direction: 'DESC' }], f.all, prodOnly)).toEqual([
        'prod/p-2',
        'prod/p-1',
        'prod/p-3',
        'prod/c-1',
        'prod/p-4',
      ]);
    });

    it('loadLinks still works with orderBy', async () => {
      const res = await search({
        filter: f.type('company'),
        orderBy: [{ propertyId: 'employees', direction: 'DESC' }],
        loadLinks: true,
      }).expect(200);
      expect(res.body.objects).toEqual([
        { id: 'c-2', environmentId: 'dev', links: {} },
        { id: 'c-1', environmentId: 'prod', links: {} },
      ]);
    });

    it('faults: InvalidArgument with the path', async () => {
      const fault = (orderBy: unknown, path: string) => expectFault('/objects/search', { filter: f.all, orderBy }, 'InvalidArgument', path);
      await fault([], 'orderBy');
      await fault({ propertyId: 'age' }, 'orderBy');
      await fault([{ propertyId: 'age' }, { propertyId: 'age' }, { attribute: 'id' }, { attribute: 'type' }], 'orderBy');
      await fault([{ propertyId: 'nope' }], 'orderBy[0].propertyId');
      await fault([{ attribute: 'id' }, { propertyId: 'home' }], 'orderBy[1].propertyId');
      await fault([{ attribute: 'color' }], 'orderBy[0].attribute');
      await fault([{ propertyId: 'age', direction: 'desc' }], 'orderBy[0].direction');
      await fault([{ propertyId: 'age', attribute: 'id' }], 'orderBy[0].attribute');
      await fault([{}], 'orderBy[0].propertyId');
      await fault([{ propertyId: 'age', extra: 1 }], 'orderBy[0].extra');
    });
  });

  describe('POST /objects/aggregate', () => {
    it('count by type and environment: first metric descending, then key ascending', async () => {
      const body = await aggregate({
        filter: f.all,
        groupBy: [
          { type: 'exact', exact: { attribute: 'type' } },
          { type: 'exact', exact: { attribute: 'environmentId' } },
        ],
        metrics: [COUNT],
      });
      expect(body).toEqual({
        groups: [
          { key: { type: 'person', environmentId: 'prod' }, metrics: { count: 4 } },
          { key: { type: 'company', environmentId: 'dev' }, metrics: { count: 1 } },
          { key: { type: 'company', environmentId: 'prod' }, metrics: { count: 1 } },
          { key: { type: 'person', environmentId: 'dev' }, metrics: { count: 1 } },
        ],
        truncated: false,
      });
    });

    it('visibility applies to the groups', async () => {
      const body = await aggregate(
        { filter: f.all, groupBy: [{ type: 'exact', exact: { attribute: 'environmentId' } }], metrics: [COUNT] },
        prodOnly,
      );
      expect(body.groups).toEqual([{ key: { environmentId: 'prod' }, metrics: { count: 5 } }]);
    });

    it('no groupBy: one group with key {}; an empty match: count 0, distinct counts 0, other metrics left out', async () => {
      expect(await aggregate({ filter: f.type('person'), metrics: [COUNT, { type: 'max', max: { propertyId: 'age' } }] })).toEqual({
        groups: [{ key: {}, metrics: { count: 5, 'max.age': 41 } }],
        truncated: false,
      });
      const none = { type: 'objectId', objectId: { ids: ['nobody'] } };
      expect(
        await aggregate({
          filter: none,
          metrics: [
            COUNT,
            { type: 'min', min: { propertyId: 'age' } },
            { type: 'exactDistinct', exactDistinct: { propertyId: 'email' } },
            { type: 'approximateDistinct', approximateDistinct: { attribute: 'type' } },
          ],
        }),
      ).toEqual({
        groups: [{ key: {}, metrics: { count: 0, 'exactDistinct.email': 0, 'approximateDistinct.type': 0 } }],
        truncated: false,
      });
      expect(await aggregate({ filter: none, groupBy: [{ type: 'exact', exact: { attribute: 'type' } }], metrics: [COUNT] })).toEqual({
        groups: [],
        truncated: false,
      });
    });

    it('exact on a multi-valued property: an object in the group of each of its values, once; metrics use every value', async () => {
      const body = await aggregate({
        filter: f.all,
        groupBy: [{ type: 'exact', exact: { propertyId: 'email' } }],
        metrics: [COUNT, { type: 'sum', sum: { propertyId: 'age' } }, { type: 'exactDistinct', exactDistinct: { propertyId: 'email' } }],
      });
      expect(body.groups).toEqual([
        { key: { email: 'a@x' }, metrics: { count: 2, 'sum.age': 72, 'exactDistinct.email': 2 } },
        { key: { email: 'b@x' }, metrics: { count: 2, 'sum.age': 77, 'exactDistinct.email': 2 } },
        { key: { email: 'c@x' }, metrics: { count: 1, 'exactDistinct.email': 1 } },
      ]);
    });

    it('exact maxGroups keeps the most frequent values, the smaller key on a tie, and says truncated', async () => {
      const byName = (maxGroups?: number) =>
        aggregate({
          filter: f.all,
          groupBy: [{ type: 'exact', exact: { propertyId: 'name', ...(maxGroups ? { maxGroups } : {}) } }],
          metrics: [COUNT],
        });
      expect(await byName(2)).toEqual({
        groups: [
          { key: { name: 'Acme' }, metrics: { count: 2 } },
          { key: { name: 'Ada' }, metrics: { count: 2 } },
        ],
        truncated: true,
      });
      expect(await byName(1)).toEqual({ groups: [{ key: { name: 'Acme' }, metrics: { count: 2 } }], truncated: true });
      expect((await byName()).truncated).toBe(false);
      expect((await byName(5)).groups).toHaveLength(5);
      // Among several buckets each exact bucket keeps its own most frequent values.
      const two = await aggregate({
        filter: f.all,
        groupBy: [
          { type: 'exact', exact: { propertyId: 'name', maxGroups: 1 } },
          { type: 'exact', exact: { attribute: 'environmentId' } },
        ],
        metrics: [COUNT],
      });
      expect(two).toEqual({
        groups: [
          { key: { name: 'Acme', environmentId: 'dev' }, metrics: { count: 1 } },
          { key: { name: 'Acme', environmentId: 'prod' }, metrics: { count: 1 } },
        ],
        truncated: true,
      });
    });

    it('fixedWidth: key = floor(v / width) × width, negative values included; doubles too', async () => {
      const ages = await aggregate({
        filter: f.all,
        groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'age', width: 10 } }],
        metrics: [COUNT],
      });
      expect(ages.groups).toEqual([
        { key: { age: 30 }, metrics: { count: 2 } },
        { key: { age: -10 }, metrics: { count: 1 } },
        { key: { age: 40 }, metrics: { count: 1 } },
      ]);
      const scores = await aggregate({
        filter: f.all,
        groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'score', width: 2.5 }, name: 'band' }],
        metrics: [COUNT],
      });
      expect(scores.groups).toEqual([0, 2.5, 5, 7.5].map((band) => ({ key: { band }, metrics: { count: 1 } })));
    });

    it('ranges: keys as given, an object in every range that holds (overlapping ranges)', async () => {
      const body = await aggregate({
        filter: f.all,
        groupBy: [{ type: 'ranges', ranges: { propertyId: 'age', ranges: [{ lt: 0 }, { gte: 0, lt: 40 }, { gte: 30 }] } }],
        metrics: [COUNT],
      });
      expect(body.groups).toEqual([
        { key: { age: { gte: 30 } }, metrics: { count: 3 } },
        { key: { age: { gte: 0, lt: 40 } }, metrics: { count: 2 } },
        { key: { age: { lt: 0 } }, metrics: { count: 1 } },
      ]);
      const times = await aggregate({
        filter: f.all,
        groupBy: [
          {
            type: 'ranges',
            ranges: {
              propertyId: 'seenAt',
              ranges: [{ gte: '2026-03-01T00:00:00+01:00', lt: '2026-03-01T00:00:00Z' }, { gte: '2026-03-01T00:00:00Z' }],
            },
          },
        ],
        metrics: [COUNT],
      });
      // Equal counts: the range with the smaller lower bound (as an instant) first.
      expect(times.groups).toEqual([
        { key: { seenAt: { gte: '2026-03-01T00:00:00+01:00', lt: '2026-03-01T00:00:00Z' } }, metrics: { count: 2 } },
        { key: { seenAt: { gte: '2026-03-01T00:00:00Z' } }, metrics: { count: 2 } },
      ]);
    });

    it('duration: UTC buckets, ISO weeks from Monday, month edges', async () => {
      const by = (unit: string, field: Record<string, string> = { propertyId: 'seenAt' }) =>
        aggregate({ filter: f.all, groupBy: [{ type: 'duration', duration: { ...field, unit }, name: 'at' }], metrics: [COUNT] });
      expect((await by('WEEK')).groups).toEqual([
        { key: { at: '2026-02-23T00:00:00.000Z' }, metrics: { count: 3 } },
        { key: { at: '2026-03-02T00:00:00.000Z' }, metrics: { count: 1 } },
      ]);
      expect((await by('MONTH')).groups).toEqual([
        { key: { at: '2026-02-01T00:00:00.000Z' }, metrics: { count: 2 } },
        { key: { at: '2026-03-01T00:00:00.000Z' }, metrics: { count: 2 } },
      ]);
      expect((await by('DAY')).groups.map((g) => g.key.at)).toEqual([
        '2026-02-28T00:00:00.000Z',
        '2026-03-01T00:00:00.000Z',
        '2026-03-02T00:00:00.000Z',
      ]);
      expect((await by('HOUR')).groups.map((g) => g.key.at)).toEqual([
        '2026-02-28T23:00:00.000Z',
        '2026-03-01T10:00:00.000Z',
        '2026-03-02T00:00:00.000Z',
      ]);
      expect((await by('YEAR', { propertyId: 'born' })).groups.map((g) => g.key.at)).toEqual(['1815-01-01', '1990-01-01', '2000-01-01']);
      expect((await by('DAY', { attribute: 'firstSighting' })).groups).toEqual([
        { key: { at: '2026-01-01T00:00:00.000Z' }, metrics: { count: 6 } },
        { key: { at: '2026-01-02T00:00:00.000Z' }, metrics: { count: 1 } },
      ]);
    });

    it('metrics: min/max on strings, dates and timestamps; sum, avg; distinct counts on properties and attributes; names', async () => {
      const body = await aggregate({
        filter: f.all,
        groupBy: [{ type: 'exact', exact: { attribute: 'type' }, name: 'kind' }],
        metrics: [
          { type: 'count', count: {}, name: 'objects' },
          { type: 'min', min: { propertyId: 'name' } },
          { type: 'max', max: { propertyId: 'born' } },
          { type: 'min', min: { propertyId: 'seenAt' } },
          { type: 'sum', sum: { propertyId: 'employees' } },
          { type: 'avg', avg: { propertyId: 'score' } },
          { type: 'exactDistinct', exactDistinct: { attribute: 'environmentId' } },
          { type: 'approximateDistinct', approximateDistinct: { propertyId: 'email' } },
          { type: 'exactDistinct', exactDistinct: { propertyId: 'home' } },
        ],
      });
      expect(body.groups).toEqual([
        {
          key: { kind: 'person' },
          metrics: {
            objects: 5,
            'min.name': 'Ada',
            'max.born': '2000-02-29',
            'min.seenAt': '2026-02-28T23:00:00.000Z',
            'avg.score': (9.5 + 7.25 + 1.5 + 3) / 4,
            'exactDistinct.environmentId': 2,
            'approximateDistinct.email': 3,
            'exactDistinct.home': 1,
          },
        },
        {
          key: { kind: 'company' },
          metrics: {
            objects: 2,
            'min.name': 'Acme',
            'sum.employees': 35,
            'exactDistinct.environmentId': 2,
            'approximateDistinct.email': 0,
            'exactDistinct.home': 0,
          },
        },
      ]);
    });

    it('a multi-valued bucket with a metric on the same property uses every value of the group objects', async () => {
      const body = await aggregate({
        filter: f.type('person'),
        groupBy: [{ type: 'exact', exact: { propertyId: 'active' } }],
        metrics: [COUNT, { type: 'max', max: { propertyId: 'email' } }, { type: 'exactDistinct', exactDistinct: { propertyId: 'email' } }],
      });
      expect(body.groups).toEqual([
        { key: { active: false }, metrics: { count: 2, 'max.email': 'b@x', 'exactDistinct.email': 2 } },
        { key: { active: true }, metrics: { count: 2, 'max.email': 'b@x', 'exactDistinct.email': 2 } },
      ]);
    });

    it('startingSet restricts to the members of a set', async () => {
      const set = await t
        .setsHttp()
        .post('/object-sets')
        .set(all)
        .send({ title: 'people in prod', definition: { type: 'filter', filter: { filter: f.and(f.type('person'), f.env('prod')) } } })
        .expect(201);
      const body = await aggregate({ filter: f.all, startingSet: set.body.id, metrics: [COUNT] });
      expect(body.groups).toEqual([{ key: {}, metrics: { count: 4 } }]);
      const missing = await t
        .objectsHttp()
        .post('/objects/aggregate')
        .set(all)
        .send({ filter: f.all, startingSet: 'ri.object-set.main.object-set.nope', metrics: [COUNT] })
        .expect(404);
      expect(missing.body.errorName).toBe('ObjectSetNotFound');
      // Sent as null, startingSet is absent (docs/api.md §1): every object, for aggregate and search alike.
      const unrestricted = await aggregate({ filter: f.all, metrics: [COUNT] });
      expect(await aggregate({ filter: f.all, startingSet: null, metrics: [COUNT] })).toEqual(unrestricted);
      const search = async (body: Record<string, unknown>) =>
        (await t.objectsHttp().post('/objects/search').set(all).send(body).expect(200)).body;
      expect(await search({ filter: f.all, startingSet: null })).toEqual(await search({ filter: f.all }));
    });

    it('faults: InvalidArgument with the path for groupBy and metrics, InvalidFilter for the filter', async () => {
      const fault = (body: Record<string, unknown>, path: string, errorName = 'InvalidArgument') =>
        expectFault('/objects/aggregate', { filter: f.all, metrics: [COUNT], ...body }, errorName, path);
      await fault({ metrics: [] }, 'metrics');
      await fault({ metrics: undefined }, 'metrics');
      await fault({ metrics: Array.from({ length: 11 }, (_, i) => ({ ...COUNT, name: `c${i}` })) }, 'metrics');
      await fault({ metrics: [COUNT, COUNT] }, 'metrics[1]');
      await fault({ metrics: [{ type: 'sum', sum: { propertyId: 'name' } }] }, 'metrics[0].sum.propertyId');
      await fault({ metrics: [{ type: 'min', min: { propertyId: 'active' } }] }, 'metrics[0].min.propertyId');
      await fault({ metrics: [{ type: 'median', median: {} }] }, 'metrics[0].type');
      await fault({ metrics: [{ type: 'count', max: {} }] }, 'metrics[0].max');
      await fault({ metrics: [{ type: 'count', count: { propertyId: 'age' } }] }, 'metrics[0].count.propertyId');
      await fault({ groupBy: [{ type: 'exact', exact: { propertyId: 'nope' } }] }, 'groupBy[0].exact.propertyId');
      await fault({ groupBy: [{ type: 'exact', exact: { propertyId: 'age', maxGroups: 0 } }] }, 'groupBy[0].exact.maxGroups');
      await fault({ groupBy: [{ type: 'exact', exact: { propertyId: 'age', maxGroups: 10001 } }] }, 'groupBy[0].exact.maxGroups');
      await fault({ groupBy: [{ type: 'exact', exact: { propertyId: 'home' } }] }, 'groupBy[0].exact.propertyId');
      await fault({ groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'born', width: 1 } }] }, 'groupBy[0].fixedWidth.propertyId');
      await fault({ groupBy: [{ type: 'fixedWidth', fixedWidth: { propertyId: 'age', width: 0 } }] }, 'groupBy[0].fixedWidth.width');
      await fault(
        { groupBy: [{ type: 'ranges', ranges: { propertyId: 'age', ranges: [{ gte: 'x' }] } }] },
        'groupBy[0].ranges.ranges[0].gte',
      );
      await fault(
        { groupBy: [{ type: 'ranges', ranges: { propertyId: 'seenAt', ranges: [{ lt: '2026-01-01T00:00:00' }] } }] },
        'groupBy[0].ranges.ranges[0].lt',
      );
      await fault(
        { groupBy: [{ type: 'ranges', ranges: { propertyId: 'name', ranges: [{ gte: 'a' }] } }] },
        'groupBy[0].ranges.propertyId',
      );
      await fault({ groupBy: [{ type: 'duration', duration: { propertyId: 'seenAt', unit: 'FORTNIGHT' } }] }, 'groupBy[0].duration.unit');
      await fault({ groupBy: [{ type: 'duration', duration: { attribute: 'type', unit: 'DAY' } }] }, 'groupBy[0].duration.attribute');
      await fault({ groupBy: [1, 2, 3, 4] }, 'groupBy');
      await fault(
        {
          groupBy: [
            { type: 'exact', exact: { attribute: 'type' } },
            { type: 'exact', exact: { attribute: 'type' } },
          ],
        },
        'groupBy[1]',
      );
      await fault({ groupBy: [{ type: 'exact', exact: { attribute: 'type' }, name: '' }] }, 'groupBy[0].name');
      await fault({ filter: { type: 'objectType', objectType: { types: ['ghost'] } } }, 'filter.objectType.types[0]', 'InvalidFilter');
      await fault({ filter: undefined }, 'filter', 'InvalidFilter');
      await fault({ extra: true }, 'extra');
    });
  });

  describe('POST /object-sets/{id}/aggregate', () => {
    it('aggregates a set built from other sets (STRONG), with the caller visibility, and the same faults', async () => {
      const make = async (title: string, definition: unknown) =>
        (await t.setsHttp().post('/object-sets').set(all).send({ title, definition }).expect(201)).body.id as string;
      const people = await make('people', { type: 'filter', filter: { filter: f.type('person') } });
      const acme = await make('acme in prod', { type: 'stable', stable: { objects: [{ environmentId: 'prod', id: 'c-1' }] } });
      const union = await make('people or acme', { type: 'operation', operation: { operator: 'UNION', objectSetIds: [people, acme] } });
      const body = {
        groupBy: [
          { type: 'exact', exact: { attribute: 'type' } },
          { type: 'exact', exact: { attribute: 'environmentId' } },
        ],
        metrics: [COUNT, { type: 'avg', avg: { propertyId: 'age' } }],
      };
      const res = await t.setsHttp().post(`/object-sets/${union}/aggregate`).set(all).send(body).expect(200);
      expect(res.body).toEqual({
        groups: [
          { key: { type: 'person', environmentId: 'prod' }, metrics: { count: 4, 'avg.age': (36 + 41 - 3) / 3 } },
          { key: { type: 'company', environmentId: 'prod' }, metrics: { count: 1 } },
          { key: { type: 'person', environmentId: 'dev' }, metrics: { count: 1, 'avg.age': 36 } },
        ],
        truncated: false,
      });
      // A new member shows at once (STRONG).
      await t
        .objectsHttp()
        .put('/objects/dev/p-9')
        .set(all)
        .send({ type: 'person', properties: [{ id: 'age', value: 20, origin: 'crm' }] })
        .expect(201);
      const after = await t.setsHttp().post(`/object-sets/${union}/aggregate`).set(all).send(body).expect(200);
      expect(after.body.groups[1]).toEqual({ key: { type: 'person', environmentId: 'dev' }, metrics: { count: 2, 'avg.age': 28 } });
      // The caller's credentials are forwarded: a prod-only caller sees prod only.
      const prod = await t
        .setsHttp()
        .post(`/object-sets/${union}/aggregate`)
        .set(prodOnly)
        .send({ metrics: [COUNT] })
        .expect(200);
      expect(prod.body).toEqual({ groups: [{ key: {}, metrics: { count: 5 } }], truncated: false });
      const fault = await t
        .setsHttp()
        .post(`/object-sets/${union}/aggregate`)
        .set(all)
        .send({ metrics: [{ type: 'sum', sum: { propertyId: 'name' } }] })
        .expect(400);
      expect({ errorName: fault.body.errorName, path: fault.body.parameters.path }).toEqual({
        errorName: 'InvalidArgument',
        path: 'metrics[0].sum.propertyId',
      });
      const unknownField = await t
        .setsHttp()
        .post(`/object-sets/${union}/aggregate`)
        .set(all)
        .send({ metrics: [COUNT], filter: f.all })
        .expect(400);
      expect(unknownField.body.errorName).toBe('InvalidArgument');
      const missing = await t
        .setsHttp()
        .post('/object-sets/ri.object-set.main.object-set.nope/aggregate')
        .set(all)
        .send({ metrics: [COUNT] })
        .expect(404);
      expect(missing.body.errorName).toBe('ObjectSetNotFound');
    });
  });

  it('Swagger documents orderBy and both aggregate operations with oneOf unions', async () => {
    const objects = (await t.objectsHttp().get('/docs/objects-json').expect(200)).body;
    const searchBody = objects.components.schemas.ObjectSearchRequest.properties.orderBy;
    // A property, an attribute, or distanceFrom (docs/api.md §13).
    expect(searchBody.items.oneOf).toHaveLength(3);
    expect(searchBody.example).toBeDefined();
    expect(objects.paths['/objects/aggregate'].post.operationId).toBe('aggregateObjects');
    const request = objects.components.schemas.AggregateObjectsRequest.properties;
    expect(request.groupBy.items.oneOf).toHaveLength(5);
    expect(request.groupBy.items.discriminator.propertyName).toBe('type');
    expect(request.metrics.items.oneOf).toHaveLength(9);
    expect(Object.keys(objects.components.schemas.CountMetric.properties).sort()).toEqual(['count', 'name', 'type']);
    const sets = (await t.setsHttp().get('/docs/object-sets-json').expect(200)).body;
    expect(sets.paths['/object-sets/{id}/aggregate'].post.operationId).toBe('aggregateObjectSet');
  });

  describe('ordered keyset paging', () => {
    // 30 objects in their own environment: ages with ties and gaps, several emails each.
    const N = 30;
    const paged = Array.from({ length: N }, (_, i) => {
      const props: Prop[] = [
        ['name', `n${String((i * 7) % N).padStart(2, '0')}`],
        ['email', `e${i % 4}`],
        ['email', `e${(i * 3) % 5}`],
      ];
      if (i % 5 !== 0) props.push(['age', i % 7]);
      if (i % 3 !== 0) props.push(['seenAt', new Date(Date.UTC(2026, 0, 1) + (i % 11) * 3_600_000).toISOString()]);
      return obj('paging', `q-${String(i).padStart(2, '0')}`, 'person', props);
    });
    beforeAll(async () => {
      await t.objectsHttp().post('/objects/ingest').set(all).send({ objects: paged }).expect(200);
    });

    /** The order of §9, computed here from the objects as written. */
    function expected(orderBy: { propertyId: string; direction?: 'ASC' | 'DESC' }[]): string[] {
      const value = (o: (typeof paged)[number], p: string, dir: string) => {
        const values = o.properties.filter((x) => x.id === p).map((x) => x.value as string | number);
        if (!values.length) return undefined;
        return values.reduce((a, b) => ((dir === 'DESC' ? b > a : b < a) ? b : a));
      };
      return [...paged]
        .sort((a, b) => {
          for (const k of orderBy) {
            const dir = k.direction ?? 'ASC';
            const [x, y] = [value(a, k.propertyId, dir), value(b, k.propertyId, dir)];
            if (x === undefined || y === undefined) {
              if (x !== y) return x === undefined ? 1 : -1;
              continue;
            }
            if (x !== y) return (x < y ? -1 : 1) * (dir === 'DESC' ? -1 : 1);
          }
          return a.id < b.id ? -1 : 1;
        })
        .map(key);
    }

    async function walk(orderBy: unknown, pageSize: number): Promise<string[]> {
      const seen: string[] = [];
      let pagingToken: string | undefined;
      for (let page = 0; page < 100; page++) {
        const res = await search({ filter: f.env('paging'), orderBy }, { pageSize, ...(pagingToken ? { pagingToken } : {}) }).expect(200);
        seen.push(...res.body.objects.map(key));
        pagingToken = res.body.pagingToken;
        if (!pagingToken) break;
        expect(res.body.objects).toHaveLength(pageSize);
      }
      return seen;
    }

    // Page sizes 1 and 2 make the statement walk the key's index (30 matches reach its
    // threshold of 10 × the rows fetched); 7 makes it sort all matches. Both must agree.
    const orders: [string, { propertyId: string; direction?: 'ASC' | 'DESC' }[]][] = [
      ['long DESC (ties, missing values)', [{ propertyId: 'age', direction: 'DESC' }]],
      ['long ASC', [{ propertyId: 'age' }]],
      ['multi-valued string DESC', [{ propertyId: 'email', direction: 'DESC' }]],
      ['multi-valued string ASC, then a timestamp DESC', [{ propertyId: 'email' }, { propertyId: 'seenAt', direction: 'DESC' }]],
      [
        'timestamp DESC, then long, then string',
        [{ propertyId: 'seenAt', direction: 'DESC' }, { propertyId: 'age' }, { propertyId: 'name' }],
      ],
    ];
    it.each(orders)('%s: every object exactly once, in order, at page sizes 1, 2 and 7', async (_, orderBy) => {
      const want = expected(orderBy);
      expect(want).toHaveLength(N);
      for (const size of [1, 2, 7]) expect({ size, got: await walk(orderBy, size) }).toEqual({ size, got: want });
    });

    it('the token is bound to orderBy (and an unordered token to no orderBy)', async () => {
      const orderBy = [{ propertyId: 'age', direction: 'DESC' }];
      const first = await search({ filter: f.env('paging'), orderBy }, { pageSize: 5 }).expect(200);
      const other = await search(
        { filter: f.env('paging'), orderBy: [{ propertyId: 'age' }] },
        { pageSize: 5, pagingToken: first.body.pagingToken },
      ).expect(400);
      expect(other.body.errorName).toBe('InvalidPagingToken');
      const unordered = await search({ filter: f.env('paging') }, { pageSize: 5, pagingToken: first.body.pagingToken }).expect(400);
      expect(unordered.body.errorName).toBe('InvalidPagingToken');
      const plain = await search({ filter: f.env('paging') }, { pageSize: 5 }).expect(200);
      const mixed = await search({ filter: f.env('paging'), orderBy }, { pageSize: 5, pagingToken: plain.body.pagingToken }).expect(400);
      expect(mixed.body.errorName).toBe('InvalidPagingToken');
      // The page size may change between pages.
      const next = await search({ filter: f.env('paging'), orderBy }, { pageSize: 25, pagingToken: first.body.pagingToken }).expect(200);
      expect([...first.body.objects, ...next.body.objects].map(key)).toEqual(expected(orderBy as never));
    });
  });
});
