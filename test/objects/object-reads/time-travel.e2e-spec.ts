import { DataSource } from 'typeorm';
import { objectsDataSourceOptions } from '../../../apps/objects/src/database/data-source';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { SearchRowHistory1764917000000 } from '../../../apps/objects/src/database/migrations/1764917000000-SearchRowHistory';
import { CoveringGeoIndexes1765400000000 } from '../../../apps/objects/src/database/migrations/1765400000000-CoveringGeoIndexes';
import { CurrentRowsInHistory1765500000000 } from '../../../apps/objects/src/database/migrations/1765500000000-CurrentRowsInHistory';
import { StoredJsonOnly1765600000000 } from '../../../apps/objects/src/database/migrations/1765600000000-StoredJsonOnly';
import { CurrentVersionOnce1765700000000 } from '../../../apps/objects/src/database/migrations/1765700000000-CurrentVersionOnce';
import { ClosedVersionTypeIndex1765800000000 } from '../../../apps/objects/src/database/migrations/1765800000000-ClosedVersionTypeIndex';
import { ValidityEndInHistoryKeys1765900000000 } from '../../../apps/objects/src/database/migrations/1765900000000-ValidityEndInHistoryKeys';
import { instant, SIGHTED } from '../../support/instants';

/**
 * Time travel on the objects app (docs/api.md §10): every read as of an instant between two versions,
 * at a delete and before the first write; every filter variant evaluated on the versions valid
 * then; tokens bound to asOf; snapshot walks that see one state while writes go on.
 */

const prop = (id: string, value: unknown, origin = 'crm') => ({ id, value, origin });
/** The value of property `id` of an object in a response (properties are kept sorted by id). */
const valueOf = (o: { properties: { id: string; value: unknown }[] }, id: string) => o.properties.find((p) => p.id === id)?.value;

describe('time travel: objects as of an instant', () => {
  let t: TestObjectsApp;
  let before: string; // before the first write
  let t1: string; // after version 1 of everything
  let t2: string; // after p-1 v2, p-2 deleted, c-2 created
  let deletedAt: string; // p-2's validTo

  const search = async (filter: unknown, asOf?: string, extra: Record<string, unknown> = {}) => {
    const res = await t
      .http()
      .post('/objects/search')
      .send({ filter, ...(asOf ? { asOf } : {}), ...extra });
    expect(res.status).toBe(200);
    if (asOf) expect(res.body.asOf).toBe(new Date(asOf).toISOString());
    else expect(res.body.asOf).toBeUndefined();
    return (res.body.objects as { id: string; environmentId: string }[]).map((o) => `${o.environmentId}/${o.id}`);
  };

  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    before = await instant();
    await t
      .http()
      .put('/objects/prod/c-1')
      .send({ type: 'company', properties: [prop('name', 'Acme')], metadata: SIGHTED })
      .expect(201);
    await t
      .http()
      .put('/objects/prod/p-1')
      .send({
        type: 'person',
        properties: [
          prop('name', 'Ada'),
          prop('age', 30),
          prop('score', 1.5),
          prop('active', true),
          prop('born', '1990-01-01'),
          prop('seenAt', '2026-01-01T10:00:00Z'),
          prop('home', { lat: 51.5, lon: -0.12 }),
          prop('email', 'ada@old.example', 'mail'),
        ],
        links: { worksFor: ['c-1'] },
        tags: ['vip'],
        metadata: SIGHTED,
      })
      .expect(201);
    await t
      .http()
      .put('/objects/prod/p-2')
      .send({ type: 'person', properties: [prop('name', 'Bob')], links: { knows: ['p-1'] }, metadata: SIGHTED })
      .expect(201);
    await t
      .http()
      .put('/objects/staging/p-1')
      .send({ type: 'person', properties: [prop('name', 'Staging Ada')], metadata: SIGHTED })
      .expect(201);
    t1 = await instant();
    await t
      .http()
      .put('/objects/prod/p-1')
      .send({
        type: 'person',
        properties: [prop('name', 'Ada Lovelace'), prop('age', 31), prop('score', 1.5), prop('email', 'ada@new.example', 'import')],
        links: { worksFor: ['c-2'] },
        tags: ['alumni'],
        metadata: { firstSighting: '2026-01-01T00:00:00Z', lastSighting: '2026-03-01T00:00:00Z' },
      })
      .expect(200);
    await t.http().delete('/objects/prod/p-2').expect(204);
    await t
      .http()
      .put('/objects/prod/c-2')
      .send({ type: 'company', properties: [prop('name', 'Babbage Ltd')], metadata: SIGHTED })
      .expect(201);
    t2 = await instant();
    const history = await t
      .http()
      .get(`/objects/prod/p-2/history?startTime=${encodeURIComponent(before)}&endTime=${encodeURIComponent(t2)}`)
      .expect(200);
    deletedAt = history.body.objects[0].validTo;
  });
  afterAll(() => t?.close());

  describe('GET /objects/{id}?asOf', () => {
    it('returns the version valid at the instant, with asOf', async () => {
      const v1 = await t
        .http()
        .get(`/objects/p-1?environmentId=prod&asOf=${encodeURIComponent(t1)}`)
        .expect(200);
      expect(v1.body).toMatchObject({ id: 'p-1', environmentId: 'prod', tags: ['vip'], links: { worksFor: ['c-1'] }, asOf: t1 });
      expect(valueOf(v1.body, 'name')).toBe('Ada');
      const v2 = await t
        .http()
        .get(`/objects/p-1?environmentId=prod&asOf=${encodeURIComponent(t2)}`)
        .expect(200);
      expect(valueOf(v2.body, 'name')).toBe('Ada Lovelace');
      expect(v2.body.metadata.lastSighting).toBe('2026-03-01T00:00:00.000Z');
      const now = await t.http().get('/objects/p-1?environmentId=prod').expect(200);
      expect(now.body.asOf).toBeUndefined();
    });

    it('is 404 before the first write and at (and after) a delete, 200 just before it', async () => {
      expect(
        (
          await t
            .http()
            .get(`/objects/c-1?asOf=${encodeURIComponent(before)}`)
            .expect(404)
        ).body.errorName,
      ).toBe('ObjectNotFound');
      await t
        .http()
        .get(`/objects/p-2?asOf=${encodeURIComponent(deletedAt)}`)
        .expect(404);
      await t
        .http()
        .get(`/objects/p-2?asOf=${encodeURIComponent(t2)}`)
        .expect(404);
      const justBefore = new Date(Date.parse(deletedAt) - 1).toISOString();
      expect(
        valueOf(
          (
            await t
              .http()
              .get(`/objects/p-2?asOf=${encodeURIComponent(justBefore)}`)
              .expect(200)
          ).body,
          'name',
        ),
      ).toBe('Bob');
    });

    it('is ambiguous as of T only among the objects that existed then', async () => {
      expect(
        (
          await t
            .http()
            .get(`/objects/p-1?asOf=${encodeURIComponent(t1)}`)
            .expect(409)
        ).body.errorName,
      ).toBe('ObjectIdAmbiguous');
    });

    it('rejects a future or malformed asOf with 400 InvalidArgument', async () => {
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const res = await t
        .http()
        .get(`/objects/p-1?asOf=${encodeURIComponent(future)}`)
        .expect(400);
      expect(res.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { field: 'asOf' } });
      await t.http().get('/objects/p-1?asOf=2026-01-01T00:00:00').expect(400);
      await t
        .http()
        .post('/objects/search')
        .send({ filter: { type: 'all', all: {} }, asOf: future })
        .expect(400);
      await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['p-1'], asOf: 'yesterday' })
        .expect(400);
      await t
        .http()
        .post('/objects/aggregate')
        .send({ filter: { type: 'all', all: {} }, metrics: [{ type: 'count', count: {} }], asOf: future })
        .expect(400);
    });
  });

  describe('POST /objects/bulk with asOf', () => {
    it('loads the versions valid at T, omitting objects absent then', async () => {
      const res = await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['p-2', 'c-2', 'p-1'], asOf: t1 })
        .expect(200);
      expect(res.body.asOf).toBe(t1);
      expect(res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`)).toEqual([
        'prod/p-2',
        'prod/p-1',
        'staging/p-1',
      ]);
      expect(valueOf(res.body.objects[1], 'name')).toBe('Ada');
      const later = await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['p-2', 'c-2', 'p-1'], asOf: t2 })
        .expect(200);
      expect(later.body.objects.map((o: { id: string }) => o.id)).toEqual(['c-2', 'p-1', 'p-1']);
      const none = await t
        .http()
        .post('/objects/bulk')
        .send({ objectIds: ['p-1'], asOf: before })
        .expect(200);
      expect(none.body).toEqual({ objects: [], asOf: before });
    });

    it('binds the paging token to asOf', async () => {
      const first = await t
        .http()
        .post('/objects/bulk?pageSize=1')
        .send({ objectIds: ['p-1', 'p-2'], asOf: t1 })
        .expect(200);
      expect(first.body.pagingToken).toEqual(expect.any(String));
      const token = encodeURIComponent(first.body.pagingToken);
      const second = await t
        .http()
        .post(`/objects/bulk?pageSize=1&pagingToken=${token}`)
        .send({ objectIds: ['p-1', 'p-2'], asOf: t1 })
        .expect(200);
      expect(second.body.objects.map((o: { environmentId: string }) => o.environmentId)).toEqual(['staging']);
      const other = await t
        .http()
        .post(`/objects/bulk?pageSize=1&pagingToken=${token}`)
        .send({ objectIds: ['p-1', 'p-2'], asOf: t2 })
        .expect(400);
      expect(other.body.errorName).toBe('InvalidPagingToken');
      await t
        .http()
        .post(`/objects/bulk?pageSize=1&pagingToken=${token}`)
        .send({ objectIds: ['p-1', 'p-2'] })
        .expect(400);
    });
  });

  describe('POST /objects/search with asOf: every filter variant on the versions valid then', () => {
    const cases: { name: string; filter: unknown; before: string[]; t1: string[]; t2: string[] }[] = [
      {
        name: 'all',
        filter: { type: 'all', all: {} },
        before: [],
        t1: ['prod/c-1', 'prod/p-1', 'prod/p-2', 'staging/p-1'],
        t2: ['prod/c-1', 'prod/c-2', 'prod/p-1', 'staging/p-1'],
      },
      {
        name: 'objectType',
        filter: { type: 'objectType', objectType: { types: ['company'] } },
        before: [],
        t1: ['prod/c-1'],
        t2: ['prod/c-1', 'prod/c-2'],
      },
      {
        name: 'environment',
        filter: { type: 'environment', environment: { environmentIds: ['staging'] } },
        before: [],
        t1: ['staging/p-1'],
        t2: ['staging/p-1'],
      },
      { name: 'objectId', filter: { type: 'objectId', objectId: { ids: ['p-2', 'c-2'] } }, before: [], t1: ['prod/p-2'], t2: ['prod/c-2'] },
      { name: 'tag', filter: { type: 'tag', tag: { tags: ['vip'] } }, before: [], t1: ['prod/p-1'], t2: [] },
      { name: 'tag ALL', filter: { type: 'tag', tag: { tags: ['alumni'], match: 'ALL' } }, before: [], t1: [], t2: ['prod/p-1'] },
      {
        name: 'propertyExists',
        filter: { type: 'propertyExists', propertyExists: { propertyId: 'born' } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyEquals string',
        filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Ada' } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyEquals boolean',
        filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'active', value: true } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyEquals geopoint',
        filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'home', value: { lat: 51.5, lon: -0.12 } } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyEquals unchanged value',
        filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'score', value: 1.5 } },
        before: [],
        t1: ['prod/p-1'],
        t2: ['prod/p-1'],
      },
      {
        name: 'propertyIn',
        filter: { type: 'propertyIn', propertyIn: { propertyId: 'email', values: ['ada@old.example', 'x@y'] } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyRange long',
        filter: { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 31 } },
        before: [],
        t1: [],
        t2: ['prod/p-1'],
      },
      {
        name: 'propertyRange date',
        filter: { type: 'propertyRange', propertyRange: { propertyId: 'born', lt: '2000-01-01' } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyRange timestamp',
        filter: { type: 'propertyRange', propertyRange: { propertyId: 'seenAt', gte: '2026-01-01T11:00:00+01:00' } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'propertyPrefix',
        filter: { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'Ada L' } },
        before: [],
        t1: [],
        t2: ['prod/p-1'],
      },
      {
        name: 'propertyPrefix caseInsensitive',
        filter: { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'bo', caseInsensitive: true } },
        before: [],
        t1: ['prod/p-2'],
        t2: [],
      },
      { name: 'propertyText', filter: { type: 'propertyText', propertyText: { query: 'lovelace' } }, before: [], t1: [], t2: ['prod/p-1'] },
      {
        name: 'propertyOrigin',
        filter: { type: 'propertyOrigin', propertyOrigin: { origin: 'mail' } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        name: 'hasLink',
        filter: { type: 'hasLink', hasLink: { linkId: 'worksFor', targetIds: ['c-1'] } },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      { name: 'hasLink knows', filter: { type: 'hasLink', hasLink: { linkId: 'knows' } }, before: [], t1: ['prod/p-2'], t2: [] },
      {
        name: 'linkedFrom',
        filter: {
          type: 'linkedFrom',
          linkedFrom: { linkId: 'knows', source: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Bob' } } },
        },
        before: [],
        t1: ['prod/p-1'],
        t2: [],
      },
      {
        // Two hops: the outer one a set computed once over the links as of the instant.
        name: 'linkedFrom two hops',
        filter: {
          type: 'linkedFrom',
          linkedFrom: {
            linkId: 'worksFor',
            source: {
              type: 'linkedFrom',
              linkedFrom: { linkId: 'knows', source: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Bob' } } },
            },
          },
        },
        before: [],
        t1: ['prod/c-1'],
        t2: [],
      },
      {
        name: 'linksTo',
        filter: {
          type: 'linksTo',
          linksTo: { linkId: 'worksFor', target: { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'Babbage' } } },
        },
        before: [],
        t1: [],
        t2: ['prod/p-1'],
      },
      {
        name: 'lastSighting',
        filter: { type: 'lastSighting', lastSighting: { start: '2026-02-01T00:00:00Z' } },
        before: [],
        t1: [],
        t2: ['prod/p-1'],
      },
      {
        name: 'firstSighting',
        filter: { type: 'firstSighting', firstSighting: { end: '2026-01-01T00:00:01Z' } },
        before: [],
        t1: ['prod/c-1', 'prod/p-1', 'prod/p-2', 'staging/p-1'],
        t2: ['prod/c-1', 'prod/c-2', 'prod/p-1', 'staging/p-1'],
      },
      {
        name: 'sightedDuring',
        filter: { type: 'sightedDuring', sightedDuring: { start: '2026-02-15T00:00:00Z', end: '2026-02-16T00:00:00Z' } },
        before: [],
        t1: [],
        t2: ['prod/p-1'],
      },
      {
        name: 'not / and / or',
        filter: {
          type: 'and',
          and: {
            filters: [
              { type: 'objectType', objectType: { types: ['person'] } },
              {
                type: 'not',
                not: {
                  filter: {
                    type: 'or',
                    or: {
                      filters: [
                        { type: 'tag', tag: { tags: ['vip'] } },
                        { type: 'environment', environment: { environmentIds: ['staging'] } },
                      ],
                    },
                  },
                },
              },
            ],
          },
        },
        before: [],
        t1: ['prod/p-2'],
        t2: ['prod/p-1'],
      },
    ];
    for (const c of cases) {
      it(`${c.name}: before the first write, at T1, at T2`, async () => {
        expect({ before: await search(c.filter, before), t1: await search(c.filter, t1), t2: await search(c.filter, t2) }).toEqual({
          before: c.before,
          t1: c.t1,
          t2: c.t2,
        });
      });
    }

    it('reads the present without asOf (and with it equal to the current state)', async () => {
      const filter = { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Ada Lovelace' } };
      expect(await search(filter)).toEqual(['prod/p-1']);
      expect(await search(filter, t2)).toEqual(['prod/p-1']);
    });

    it('loads links as of T and orders by a property as of T', async () => {
      const res = await t
        .http()
        .post('/objects/search')
        .send({ filter: { type: 'hasLink', hasLink: { linkId: 'worksFor' } }, loadLinks: true, asOf: t1 })
        .expect(200);
      expect(res.body.objects).toEqual([{ id: 'p-1', environmentId: 'prod', links: { worksFor: ['c-1'] } }]);
      const ordered = await t
        .http()
        .post('/objects/search')
        .send({
          filter: { type: 'objectType', objectType: { types: ['person'] } },
          orderBy: [{ propertyId: 'name', direction: 'DESC' }],
          asOf: t1,
        })
        .expect(200);
      expect(ordered.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`)).toEqual([
        'staging/p-1',
        'prod/p-2',
        'prod/p-1',
      ]);
    });

    it('binds the search token to asOf', async () => {
      const body = { filter: { type: 'all', all: {} }, asOf: t1 };
      const first = await t.http().post('/objects/search?pageSize=2').send(body).expect(200);
      const token = encodeURIComponent(first.body.pagingToken);
      const second = await t.http().post(`/objects/search?pageSize=2&pagingToken=${token}`).send(body).expect(200);
      expect([...first.body.objects, ...second.body.objects].map((o: { id: string }) => o.id)).toEqual(['c-1', 'p-1', 'p-2', 'p-1']);
      expect(
        (
          await t
            .http()
            .post(`/objects/search?pageSize=2&pagingToken=${token}`)
            .send({ ...body, asOf: t2 })
            .expect(400)
        ).body.errorName,
      ).toBe('InvalidPagingToken');
    });
  });

  describe('POST /objects/aggregate with asOf', () => {
    it('groups the objects as they were at T', async () => {
      const body = {
        filter: { type: 'all', all: {} },
        groupBy: [{ type: 'exact', exact: { attribute: 'type' } }],
        metrics: [
          { type: 'count', count: {} },
          { type: 'max', max: { propertyId: 'age' } },
        ],
      };
      const at1 = await t
        .http()
        .post('/objects/aggregate')
        .send({ ...body, asOf: t1 })
        .expect(200);
      expect(at1.body).toEqual({
        groups: [
          { key: { type: 'person' }, metrics: { count: 3, 'max.age': 30 } },
          { key: { type: 'company' }, metrics: { count: 1 } },
        ],
        truncated: false,
        asOf: t1,
      });
      const at2 = await t
        .http()
        .post('/objects/aggregate')
        .send({ ...body, asOf: t2 })
        .expect(200);
      expect(at2.body.groups).toEqual([
        { key: { type: 'company' }, metrics: { count: 2 } },
        { key: { type: 'person' }, metrics: { count: 2, 'max.age': 31 } },
      ]);
      const empty = await t
        .http()
        .post('/objects/aggregate')
        .send({ filter: body.filter, metrics: body.metrics, asOf: before })
        .expect(200);
      expect(empty.body).toEqual({ groups: [{ key: {}, metrics: { count: 0 } }], truncated: false, asOf: before });
    });
  });

  describe('snapshot paging', () => {
    it('walks one state of the data while objects are written, changed and deleted between pages', async () => {
      for (let i = 1; i <= 6; i++) {
        await t
          .http()
          .put(`/objects/snap/s-${i}`)
          .send({ type: 'person', properties: [prop('name', `S${i}`), prop('age', i)], metadata: SIGHTED })
          .expect(201);
      }
      const filter = { type: 'propertyRange', propertyRange: { propertyId: 'age', lte: 100 } };
      const body = {
        filter: { type: 'and', and: { filters: [{ type: 'environment', environment: { environmentIds: ['snap'] } }, filter] } },
        snapshot: true,
      };
      const seen: string[] = [];
      const instants = new Set<string>();
      let res = await t.http().post('/objects/search?pageSize=2').send(body).expect(200);
      for (let page = 0; ; page++) {
        seen.push(...res.body.objects.map((o: { id: string }) => o.id));
        instants.add(res.body.asOf);
        if (page === 0) {
          // Between pages: a new object that sorts first and one that sorts last, a change that
          // takes s-4 out of the match, a delete, and a change of s-1 that the walk already passed.
          await t
            .http()
            .put('/objects/snap/s-0')
            .send({ type: 'person', properties: [prop('age', 0)], metadata: SIGHTED })
            .expect(201);
          await t
            .http()
            .put('/objects/snap/s-9')
            .send({ type: 'person', properties: [prop('age', 9)], metadata: SIGHTED })
            .expect(201);
          await t
            .http()
            .put('/objects/snap/s-4')
            .send({ type: 'person', properties: [prop('age', 400)], metadata: SIGHTED })
            .expect(200);
          await t.http().delete('/objects/snap/s-5').expect(204);
        }
        if (!res.body.pagingToken) break;
        res = await t
          .http()
          .post(`/objects/search?pageSize=2&pagingToken=${encodeURIComponent(res.body.pagingToken)}`)
          .send(body)
          .expect(200);
      }
      expect(seen).toEqual(['s-1', 's-2', 's-3', 's-4', 's-5', 's-6']);
      expect(instants.size).toBe(1);
      expect([...instants][0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The same walk without snapshot sees the writes.
      const now = await search(body.filter);
      expect(now).toEqual(['snap/s-0', 'snap/s-1', 'snap/s-2', 'snap/s-3', 'snap/s-6', 'snap/s-9']);
    });

    it('walks an ordered search in one state: the token carries the instant beside the sort keys', async () => {
      const body = {
        filter: { type: 'environment', environment: { environmentIds: ['snap'] } },
        orderBy: [{ propertyId: 'age', direction: 'DESC' }],
        snapshot: true,
      };
      const first = await t.http().post('/objects/search?pageSize=2').send(body).expect(200);
      // Between pages: the oldest becomes the youngest, and a new oldest appears.
      await t
        .http()
        .put('/objects/snap/s-9')
        .send({ type: 'person', properties: [prop('age', -1)], metadata: SIGHTED })
        .expect(200);
      await t
        .http()
        .put('/objects/snap/s-99')
        .send({ type: 'person', properties: [prop('age', 1000)], metadata: SIGHTED })
        .expect(201);
      const ids = [...first.body.objects.map((o: { id: string }) => o.id)];
      let res = first;
      while (res.body.pagingToken) {
        res = await t
          .http()
          .post(`/objects/search?pageSize=2&pagingToken=${encodeURIComponent(res.body.pagingToken)}`)
          .send(body)
          .expect(200);
        expect(res.body.asOf).toBe(first.body.asOf);
        ids.push(...res.body.objects.map((o: { id: string }) => o.id));
      }
      // As the first page saw the data: ages 400, 9, 6, 3, 2, 1, 0 (s-9 at -1 and s-99 came later).
      expect(ids).toEqual(['s-4', 's-9', 's-6', 's-3', 's-2', 's-1', 's-0']);
    });

    it('pages bulk loads in one state too, and keeps a snapshot token from serving a plain request', async () => {
      const ids = ['s-1', 's-2', 's-3'];
      const first = await t.http().post('/objects/bulk?pageSize=1').send({ objectIds: ids, snapshot: true }).expect(200);
      await t
        .http()
        .put('/objects/snap/s-3')
        .send({ type: 'person', properties: [prop('name', 'changed')], metadata: SIGHTED })
        .expect(200);
      await t.http().delete('/objects/snap/s-2').expect(204);
      let res = first;
      const names: string[] = [];
      for (;;) {
        names.push(...res.body.objects.map((o: { properties: { id: string; value: unknown }[] }) => valueOf(o, 'name')));
        expect(res.body.asOf).toBe(first.body.asOf);
        if (!res.body.pagingToken) break;
        res = await t
          .http()
          .post(`/objects/bulk?pageSize=1&pagingToken=${encodeURIComponent(res.body.pagingToken)}`)
          .send({ objectIds: ids, snapshot: true })
          .expect(200);
      }
      expect(names).toEqual(['S1', 'S2', 'S3']);
      const plain = await t
        .http()
        .post(`/objects/bulk?pageSize=1&pagingToken=${encodeURIComponent(first.body.pagingToken)}`)
        .send({ objectIds: ids })
        .expect(400);
      expect(plain.body.errorName).toBe('InvalidPagingToken');
    });
  });

  describe('the history rows', () => {
    it('are rebuilt by the migrations from the version store: the same as-of answers after a backfill and the switch to one table', async () => {
      const filters = [
        { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Ada' } },
        { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: 1 } },
        { type: 'hasLink', hasLink: { linkId: 'worksFor' } },
        { type: 'linkedFrom', linkedFrom: { linkId: 'knows', source: { type: 'all', all: {} } } },
        { type: 'propertyEquals', propertyEquals: { propertyId: 'home', value: { lat: 51.5, lon: -0.12 } } },
        { type: 'propertyRange', propertyRange: { propertyId: 'seenAt', gte: '2026-01-01T00:00:00Z' } },
      ];
      const answers = async () => {
        const out: string[][] = [];
        for (const f of filters) for (const at of [t1, t2, undefined]) out.push(await search(f, at));
        return out;
      };
      const expected = await answers();
      // The migration runs on a TypeORM QueryRunner, as the app's migrations do (the app itself runs no TypeORM).
      const ds = await new DataSource(objectsDataSourceOptions(t.databaseUrl, 1)).initialize();
      const q = ds.createQueryRunner();
      try {
        await q.startTransaction();
        // Back to the layout before time travel: properties and links as columns (StoredJsonOnly's
        // down), current tables of their own (CurrentRowsInHistory's down rebuilds them from the
        // open rows), every version in objects.object_version (CurrentVersionOnce's down), no
        // history. Then every migration since, again.
        await new ValidityEndInHistoryKeys1765900000000().down(q);
        await new ClosedVersionTypeIndex1765800000000().down(q);
        await new CurrentVersionOnce1765700000000().down(q);
        await new StoredJsonOnly1765600000000().down(q);
        await new CurrentRowsInHistory1765500000000().down(q);
        await q.query('DROP TABLE objects.property_value_history');
        await q.query('DROP TABLE objects.link_history');
        for (const index of ['id', 'type_key', 'tags', 'first_sighting', 'last_sighting'])
          await q.query(`DROP INDEX objects.object_version_${index}_idx`);
        await new SearchRowHistory1764917000000().up(q);
        await new CoveringGeoIndexes1765400000000().up(q);
        await new CurrentRowsInHistory1765500000000().up(q);
        await new StoredJsonOnly1765600000000().up(q);
        await new CurrentVersionOnce1765700000000().up(q);
        await new ClosedVersionTypeIndex1765800000000().up(q);
        await new ValidityEndInHistoryKeys1765900000000().up(q);
        await q.commitTransaction();
      } finally {
        await q.release();
        await ds.destroy();
      }
      expect(await answers()).toEqual(expected);
      const { rows } = await t.db.query(`SELECT count(*)::int AS n FROM objects.property_value_history WHERE valid_to < 'infinity'`);
      expect(rows[0].n).toBeGreaterThan(0);
      // The history keys end with the validity's end again (ValidityEndInHistoryKeys), and a write
      // that closes and opens rows still works on them.
      const keys = await t.db.query(
        `SELECT pg_get_indexdef(i::regclass) AS def FROM unnest(ARRAY['objects.property_value_history_pkey', 'objects.link_history_pkey']) i`,
      );
      expect(keys.rows.map((r: { def: string }) => r.def.replace(/^.*USING btree /, ''))).toEqual([
        '(environment_id, object_id, property_id, valid_to, ordinal)',
        '(environment_id, source_id, link_id, valid_to, target_id)',
      ]);
      const written = await t
        .http()
        .put('/objects/staging/keys-1')
        .send({ type: 'person', properties: [prop('name', 'Keys One')], links: { knows: ['p-1'] }, metadata: SIGHTED })
        .expect(201);
      await t
        .http()
        .put('/objects/staging/keys-1')
        .send({ type: 'person', properties: [prop('name', 'Keys Two')], links: { knows: ['keys-2'] }, metadata: SIGHTED })
        .expect(200);
      const named = (name: string, at?: string) =>
        search({ type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: name } }, at);
      expect(await named('Keys Two')).toEqual(['staging/keys-1']);
      expect(await named('Keys One')).toEqual([]);
      expect(await named('Keys One', written.body.validFrom)).toEqual(['staging/keys-1']);
    });
  });
});
