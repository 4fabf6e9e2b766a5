import { Client } from 'pg';
import { Clock } from '@app/platform';
import { ObjectSetsService } from '../../apps/object-sets/src/object-sets/object-sets.service';
import { startBothApps, startObjectSetsApp, TestBothApps } from '../support/apps';
import { FakeClock } from '../support/clock';
import { WRITE_ONTOLOGY } from '../support/ontologies';

const RID = /^ri\.object-set\.main\.object-set\.[0-9a-f-]{36}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

type Members = {
  members: Record<string, string[]>;
  links: { linkId: string; sourceObjectId: string; targetObjectId: string; environmentId: string }[];
};

function person(id: string, env: string, tags: string[], links: Record<string, string[]> = {}) {
  return { environmentId: env, id, type: 'person', properties: [{ id: 'name', value: `Person ${id}`, origin: 'crm' }], tags, links };
}
function company(id: string, env: string) {
  return { environmentId: env, id, type: 'company', properties: [{ id: 'name', value: `Company ${id}`, origin: 'crm' }] };
}
const f = {
  tag: (...tags: string[]) => ({ type: 'tag', tag: { tags } }),
  type: (...types: string[]) => ({ type: 'objectType', objectType: { types } }),
  all: () => ({ type: 'all', all: {} }),
};

function expectError(body: Record<string, unknown>, errorName: string, parameters?: Record<string, unknown>) {
  expect(body).toMatchObject({ errorName, errorInstanceId: expect.any(String) });
  if (parameters) expect(body.parameters).toMatchObject(parameters);
}

/** Seeds: prod p-1..p-6 and c-1..c-3, staging p-1, p-2, c-1. */
async function seed(t: TestBothApps): Promise<void> {
  await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
  await t
    .objectsHttp()
    .post('/objects/ingest')
    .send({
      objects: [
        person('p-1', 'prod', ['vip'], { worksFor: ['c-1'], knows: ['p-2'] }),
        person('p-2', 'prod', ['vip', 'new'], { worksFor: ['c-2'], knows: ['p-1', 'p-3'] }),
        person('p-3', 'prod', ['new'], { worksFor: ['c-2'] }),
        person('p-4', 'prod', [], { worksFor: ['c-3'], knows: ['p-1'] }),
        person('p-5', 'prod', ['vip'], {}),
        person('p-6', 'prod', ['churn'], { worksFor: ['c-1'] }),
        company('c-1', 'prod'),
        company('c-2', 'prod'),
        company('c-3', 'prod'),
        person('p-1', 'staging', ['vip'], { worksFor: ['c-1'] }),
        person('p-2', 'staging', [], { knows: ['p-1'] }),
        company('c-1', 'staging'),
      ],
    })
    .expect(200);
}

const MEMBERS_CACHE_TTL_S = 60;
const EPHEMERAL_SET_TTL_S = 3600;

describe('object sets: definitions, members, consistency, errors', () => {
  let t: TestBothApps;
  // The object-sets app's time: expiry and the members cache TTL move with it, not with sleeps.
  // Ahead of the database's clock, which is a lower bound of set write instants (live sets,
  // docs/api.md §12): the sets' times are then exactly this clock's.
  const clock = new FakeClock(new Date(Date.now() + 60_000));
  beforeAll(async () => {
    t = await startBothApps(
      { MEMBERS_CACHE_TTL: String(MEMBERS_CACHE_TTL_S), EPHEMERAL_SET_TTL: String(EPHEMERAL_SET_TTL_S) },
      { objectSets: (m) => m.overrideProvider(Clock).useValue(clock) },
    );
    await seed(t);
  });
  afterAll(() => t?.close());

  async function create(definition: unknown, extra: Record<string, unknown> = {}, user = 'ada'): Promise<string> {
    const res = await t
      .setsHttp()
      .post('/object-sets')
      .set('x-user-id', user)
      .send({ title: 'a set', definition, ...extra });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.id;
  }
  async function members(id: string, consistency?: string): Promise<Members> {
    const res = await t
      .setsHttp()
      .get(`/object-sets/${id}/members`)
      .query(consistency ? { consistency } : {})
      .expect(200);
    return res.body;
  }
  /** The same membership through searchObjects with startingSet, as "env/id". */
  async function searchIds(id: string): Promise<string[]> {
    const res = await t.objectsHttp().post('/objects/search').send({ filter: f.all(), startingSet: id }).expect(200);
    return res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`);
  }
  const flat = (m: Members) => Object.entries(m.members).flatMap(([env, ids]) => ids.map((id) => `${env}/${id}`));

  async function expectMembers(id: string, expected: Record<string, string[]>): Promise<Members> {
    const m = await members(id);
    expect(m.members).toEqual(expected);
    expect(await searchIds(id)).toEqual(flat(m));
    return m;
  }

  describe('every definition kind', () => {
    it('creates a set (201) with the full metadata and reads it back', async () => {
      const res = await t
        .setsHttp()
        .post('/object-sets')
        .set('x-user-id', 'ada')
        .send({ title: 'VIPs', description: 'tagged vip', definition: { type: 'filter', filter: { filter: f.tag('vip') } } })
        .expect(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(RID),
        title: 'VIPs',
        description: 'tagged vip',
        definition: { type: 'filter', filter: { filter: f.tag('vip') } },
        scope: { environmentIds: [] },
        immutable: false,
        ephemeral: false,
        creator: 'ada',
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      });
      const meta = await t.setsHttp().get(`/object-sets/${res.body.id}/metadata`).expect(200);
      expect(meta.body).toEqual(res.body);
    });

    it('empty: no members', async () => {
      const id = await create({ type: 'empty', empty: {} });
      expect(await expectMembers(id, {})).toEqual({ members: {}, links: [] });
    });

    it('stable: the listed objects that exist, grouped by environment, ids sorted', async () => {
      const id = await create({
        type: 'stable',
        stable: {
          objects: [
            { environmentId: 'prod', id: 'p-2' },
            { environmentId: 'staging', id: 'p-1' },
            { environmentId: 'prod', id: 'p-1' },
            { environmentId: 'prod', id: 'ghost' },
          ],
        },
      });
      const m = await expectMembers(id, { prod: ['p-1', 'p-2'], staging: ['p-1'] });
      // links whose both ends are members: p-1 knows p-2 and p-2 knows p-1 in prod; none in staging.
      expect(m.links).toEqual([
        { linkId: 'knows', sourceObjectId: 'p-1', targetObjectId: 'p-2', environmentId: 'prod' },
        { linkId: 'knows', sourceObjectId: 'p-2', targetObjectId: 'p-1', environmentId: 'prod' },
      ]);
    });

    it('a filter with an empty id list: no members, and the set reads back as it was written', async () => {
      const definition = { type: 'filter', filter: { filter: { type: 'objectId', objectId: { ids: [] } } } };
      const id = await create(definition);
      expect(await expectMembers(id, {})).toEqual({ members: {}, links: [] });
      // Its answer is checked against the OpenAPI document too (which once said ids had at least one entry).
      expect((await t.setsHttp().get(`/object-sets/${id}/metadata`).expect(200)).body.definition).toEqual(definition);
    });

    it('filter, with and without a starting set', async () => {
      const vip = await create({ type: 'filter', filter: { filter: f.tag('vip') } });
      await expectMembers(vip, { prod: ['p-1', 'p-2', 'p-5'], staging: ['p-1'] });
      const newVip = await create({ type: 'filter', filter: { filter: f.tag('new'), startingSet: vip } });
      await expectMembers(newVip, { prod: ['p-2'] });
    });

    it('operation: UNION, INTERSECTION, DIFFERENCE (first minus all others)', async () => {
      const vip = await create({ type: 'filter', filter: { filter: f.tag('vip') } });
      const fresh = await create({ type: 'filter', filter: { filter: f.tag('new') } });
      const churn = await create({ type: 'filter', filter: { filter: f.tag('churn') } });
      const op = (operator: string, ids: string[]) => create({ type: 'operation', operation: { operator, objectSetIds: ids } });
      await expectMembers(await op('UNION', [vip, fresh, churn]), { prod: ['p-1', 'p-2', 'p-3', 'p-5', 'p-6'], staging: ['p-1'] });
      await expectMembers(await op('INTERSECTION', [vip, fresh]), { prod: ['p-2'] });
      await expectMembers(await op('DIFFERENCE', [vip, fresh, churn]), { prod: ['p-1', 'p-5'], staging: ['p-1'] });
      await expectMembers(await op('UNION', [vip]), { prod: ['p-1', 'p-2', 'p-5'], staging: ['p-1'] });
    });

    it('linkOperation EXTRACT_TARGET: the targets of that link from the source set', async () => {
      const vip = await create({ type: 'filter', filter: { filter: f.tag('vip') } });
      const employers = await create({
        type: 'linkOperation',
        linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: vip },
      });
      await expectMembers(employers, { prod: ['c-1', 'c-2'], staging: ['c-1'] });
    });

    it('nests three levels (link operation over a difference over a filter with a starting set) and shares a set referenced twice', async () => {
      const people = await create({ type: 'filter', filter: { filter: f.type('person') } });
      const vipPeople = await create({ type: 'filter', filter: { filter: f.tag('vip'), startingSet: people } });
      const nonVip = await create({ type: 'operation', operation: { operator: 'DIFFERENCE', objectSetIds: [people, vipPeople] } });
      const employersOfNonVip = await create({
        type: 'linkOperation',
        linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: nonVip },
      });
      await expectMembers(nonVip, { prod: ['p-3', 'p-4', 'p-6'], staging: ['p-2'] });
      await expectMembers(employersOfNonVip, { prod: ['c-1', 'c-2', 'c-3'] });
      // A diamond: the union references `people` directly and through vipPeople.
      const diamond = await create({
        type: 'operation',
        operation: { operator: 'INTERSECTION', objectSetIds: [people, vipPeople, nonVip] },
      });
      await expectMembers(diamond, {});
    });

    it("applies each set's own scope, also where another set references it", async () => {
      const prodVip = await create({ type: 'filter', filter: { filter: f.tag('vip') } }, { scope: { environmentIds: ['prod'] } });
      await expectMembers(prodVip, { prod: ['p-1', 'p-2', 'p-5'] });
      const stagingAll = await create({ type: 'filter', filter: { filter: f.all() } }, { scope: { environmentIds: ['staging'] } });
      const union = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [prodVip, stagingAll] } });
      await expectMembers(union, { prod: ['p-1', 'p-2', 'p-5'], staging: ['c-1', 'p-1', 'p-2'] });
    });

    it('runs ONE SQL statement against the objects for a membership read, whatever the nesting', async () => {
      const a = await create({ type: 'filter', filter: { filter: f.tag('vip') } });
      const b = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [a] } });
      const c = await create({ type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: b } });
      // Every statement, through TypeORM or straight on the pg pool (hot paths), is run by a pg Client.
      const spies = [jest.spyOn(Client.prototype, 'query')];
      try {
        await members(c, 'STRONG');
        const onObjects = spies
          // A statement is its text, or { name, text, values } when it runs prepared.
          .flatMap((spy) =>
            spy.mock.calls.map((call) => (typeof call[0] === 'string' ? call[0] : String((call[0] as { text?: string })?.text))),
          )
          .filter((sql) => /objects\.(object|link|property_value)\b/.test(sql));
        expect(onObjects).toHaveLength(1);
      } finally {
        spies.forEach((spy) => spy.mockRestore());
      }
    });
  });

  describe('consistency', () => {
    it('EVENTUALLY serves the cached result within MEMBERS_CACHE_TTL and a fresh one after it; STRONG is always fresh', async () => {
      const id = await create({ type: 'filter', filter: { filter: f.tag('watch') } });
      expect((await members(id, 'EVENTUALLY')).members).toEqual({});
      await t
        .objectsHttp()
        .post('/objects/ingest')
        .send({ objects: [person('w-1', 'prod', ['watch'])] })
        .expect(200);
      expect((await members(id, 'EVENTUALLY')).members).toEqual({}); // cached
      clock.advance(1000);
      expect((await members(id, 'STRONG')).members).toEqual({ prod: ['w-1'] });
      await t
        .objectsHttp()
        .post('/objects/ingest')
        .send({ objects: [person('w-2', 'prod', ['watch'])] })
        .expect(200);
      expect((await members(id, 'EVENTUALLY')).members).toEqual({ prod: ['w-1'] }); // cached by the STRONG read
      clock.advance(MEMBERS_CACHE_TTL_S * 1000 - 1);
      expect((await members(id, 'EVENTUALLY')).members).toEqual({ prod: ['w-1'] }); // 1 ms short of the TTL: still cached
      clock.advance(1);
      expect((await members(id, 'EVENTUALLY')).members).toEqual({ prod: ['w-1', 'w-2'] });
      expect((await members(id)).members).toEqual({ prod: ['w-1', 'w-2'] }); // default STRONG
    });

    it('rejects an unknown consistency', async () => {
      const id = await create({ type: 'empty', empty: {} });
      expectError((await t.setsHttp().get(`/object-sets/${id}/members?consistency=SOMETIMES`).expect(400)).body, 'InvalidArgument', {
        field: 'consistency',
      });
    });
  });

  describe('writes and their errors', () => {
    it('updates title, description, definition and scope (200), for the creator only', async () => {
      const id = await create({ type: 'filter', filter: { filter: f.tag('vip') } }, { description: 'old' });
      const res = await t
        .setsHttp()
        .put(`/object-sets/${id}`)
        .set('x-user-id', 'ada')
        .send({
          title: 'renamed',
          description: null,
          definition: { type: 'filter', filter: { filter: f.tag('new') } },
          scope: { environmentIds: ['prod'] },
        })
        .expect(200);
      expect(res.body).toMatchObject({
        id,
        title: 'renamed',
        scope: { environmentIds: ['prod'] },
        definition: { type: 'filter', filter: { filter: f.tag('new') } },
      });
      expect('description' in res.body).toBe(false);
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(res.body.createdAt));
      await expectMembers(id, { prod: ['p-2', 'p-3'] });
      expectError(
        (await t.setsHttp().put(`/object-sets/${id}`).set('x-user-id', 'eve').send({ title: 'mine' }).expect(403)).body,
        'PermissionDenied',
      );
      expectError((await t.setsHttp().delete(`/object-sets/${id}`).set('x-user-id', 'eve').expect(403)).body, 'PermissionDenied');
    });

    it('refuses to change an immutable set (409 ObjectSetImmutable)', async () => {
      const id = await create({ type: 'empty', empty: {} }, { immutable: true });
      expectError(
        (await t.setsHttp().put(`/object-sets/${id}`).set('x-user-id', 'ada').send({ title: 'x' }).expect(409)).body,
        'ObjectSetImmutable',
        { objectSetId: id },
      );
    });

    it('deletes (204), then the set is 404 everywhere; a referenced set cannot be deleted (409 ObjectSetInUse)', async () => {
      const base = await create({ type: 'empty', empty: {} });
      const user = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [base] } });
      expectError((await t.setsHttp().delete(`/object-sets/${base}`).set('x-user-id', 'ada').expect(409)).body, 'ObjectSetInUse', {
        objectSetId: base,
      });
      await t.setsHttp().delete(`/object-sets/${user}`).set('x-user-id', 'ada').expect(204);
      await t.setsHttp().delete(`/object-sets/${base}`).set('x-user-id', 'ada').expect(204);
      for (const req of [
        t.setsHttp().get(`/object-sets/${base}/metadata`),
        t.setsHttp().get(`/object-sets/${base}/members`),
        t.setsHttp().put(`/object-sets/${base}`).set('x-user-id', 'ada').send({ title: 'x' }),
        t.setsHttp().delete(`/object-sets/${base}`).set('x-user-id', 'ada'),
      ]) {
        const res = await req.expect(404);
        expectError(res.body, 'ObjectSetNotFound', { objectSetId: base });
      }
    });

    it('checks references when written: unknown sets and cycles are 400 InvalidObjectSetDefinition', async () => {
      const missing = 'ri.object-set.main.object-set.00000000-0000-0000-0000-000000000000';
      const res = await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'x', definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [missing] } } })
        .expect(400);
      expectError(res.body, 'InvalidObjectSetDefinition', { path: 'definition.operation.objectSetIds[0]' });
      const a = await create({ type: 'empty', empty: {} });
      const b = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [a] } });
      const cycle = await t
        .setsHttp()
        .put(`/object-sets/${a}`)
        .set('x-user-id', 'ada')
        .send({ definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [b] } } })
        .expect(400);
      expectError(cycle.body, 'InvalidObjectSetDefinition');
      expect(cycle.body.parameters.reason).toMatch(/cycle/);
      // A set that refers to itself through a starting set.
      const self = await t
        .setsHttp()
        .put(`/object-sets/${a}`)
        .set('x-user-id', 'ada')
        .send({ definition: { type: 'filter', filter: { filter: f.all(), startingSet: a } } })
        .expect(400);
      expectError(self.body, 'InvalidObjectSetDefinition');
      // Nothing was changed by the refused writes.
      expect((await t.setsHttp().get(`/object-sets/${a}/metadata`).expect(200)).body.definition).toEqual({ type: 'empty', empty: {} });
    });

    it('validates filters and link ids against the ontology, and the definition shape', async () => {
      const bad = async (definition: unknown) =>
        (await t.setsHttp().post('/object-sets').send({ title: 'x', definition }).expect(400)).body;
      expectError(
        await bad({ type: 'filter', filter: { filter: { type: 'propertyEquals', propertyEquals: { propertyId: 'nope', value: 1 } } } }),
        'InvalidFilter',
        {
          path: 'definition.filter.filter.propertyEquals.propertyId',
        },
      );
      expectError(await bad({ type: 'filter', filter: { filter: { type: 'tag' } } }), 'InvalidFilter');
      const base = await create({ type: 'empty', empty: {} });
      expectError(
        await bad({ type: 'linkOperation', linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'nope', objectSetId: base } }),
        'InvalidArgument',
        {
          field: 'definition.linkOperation.linkId',
        },
      );
      expectError(await bad({ type: 'bogus', bogus: {} }), 'InvalidArgument', { field: 'definition.type' });
      expectError(await bad({ type: 'empty', stable: {} }), 'InvalidArgument');
      expectError(await bad({ type: 'operation', operation: { operator: 'XOR', objectSetIds: [base] } }), 'InvalidArgument', {
        field: 'definition.operation.operator',
      });
      expectError(await bad({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [] } }), 'InvalidArgument');
      expectError(await bad({ type: 'stable', stable: { objects: [{ environmentId: 'prod' }] } }), 'InvalidArgument', {
        field: 'definition.stable.objects[0].id',
      });
      expectError(await bad(undefined), 'InvalidArgument');
      expectError(
        (
          await t
            .setsHttp()
            .post('/object-sets')
            .send({ definition: { type: 'empty', empty: {} } })
            .expect(400)
        ).body,
        'InvalidArgument',
      );
      expectError(
        (
          await t
            .setsHttp()
            .post('/object-sets')
            .send({ title: 'x', definition: { type: 'empty', empty: {} }, extra: 1 })
            .expect(400)
        ).body,
        'InvalidArgument',
      );
      expectError(
        (
          await t
            .setsHttp()
            .post('/object-sets')
            .send({ title: 'x', definition: { type: 'empty', empty: {} }, scope: { environmentIds: ['versioned'] } })
            .expect(400)
        ).body,
        'InvalidArgument',
      );
    });

    it('bounds stable sets at 100,000 objects (400 InvalidObjectSetDefinition)', async () => {
      const objects = Array.from({ length: 100_001 }, (_, i) => ({ environmentId: 'prod', id: `s-${i}` }));
      const res = await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'big', definition: { type: 'stable', stable: { objects } } })
        .expect(400);
      expectError(res.body, 'InvalidObjectSetDefinition', { path: 'definition.stable.objects' });
    });

    it('ephemeral sets expire after EPHEMERAL_SET_TTL: then 404 everywhere, no longer referable, and swept from storage', async () => {
      const createdAt = clock.now().toISOString();
      const res = await t
        .setsHttp()
        .post('/object-sets')
        .set('x-user-id', 'ada')
        .send({ title: 'tmp', definition: { type: 'filter', filter: { filter: f.tag('vip') } }, ephemeral: true })
        .expect(201);
      const id: string = res.body.id;
      expect(res.body).toMatchObject({
        ephemeral: true,
        createdAt,
        expiresAt: new Date(Date.parse(createdAt) + EPHEMERAL_SET_TTL_S * 1000).toISOString(),
      });
      const vipMembers = { prod: ['p-1', 'p-2', 'p-5'], staging: ['p-1'] };
      expect((await members(id, 'EVENTUALLY')).members).toEqual(vipMembers);

      clock.advance(EPHEMERAL_SET_TTL_S * 1000 - 1);
      await t.setsHttp().get(`/object-sets/${id}/metadata`).expect(200);
      expect(await searchIds(id)).toEqual(flat({ members: vipMembers, links: [] }));
      const referrer = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [id] } });

      clock.advance(1);
      for (const req of [
        t.setsHttp().get(`/object-sets/${id}/metadata`),
        t.setsHttp().get(`/object-sets/${id}/members`),
        // The cached result is still stored but no longer served.
        t.setsHttp().get(`/object-sets/${id}/members?consistency=EVENTUALLY`),
        t.setsHttp().put(`/object-sets/${id}`).set('x-user-id', 'ada').send({ title: 'x' }),
        t.setsHttp().delete(`/object-sets/${id}`).set('x-user-id', 'ada'),
      ]) {
        expectError((await req.expect(404)).body, 'ObjectSetNotFound', { objectSetId: id });
      }
      expectError(
        (await t.objectsHttp().post('/objects/search').send({ filter: f.all(), startingSet: id }).expect(404)).body,
        'ObjectSetNotFound',
        { objectSetId: id },
      );
      // A set that referenced it keeps working (the expired set stays stored while referenced); a new reference to it is refused.
      expect((await t.setsHttp().get(`/object-sets/${referrer}/members`).expect(200)).body.members).toEqual(vipMembers);
      const again = await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'late', definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [id] } } })
        .expect(400);
      expectError(again.body, 'InvalidObjectSetDefinition', { path: 'definition.operation.objectSetIds[0]' });
      await t.setsHttp().delete(`/object-sets/${referrer}`).set('x-user-id', 'ada').expect(204);

      const stored = async () => (await t.db.query(`SELECT count(*)::int AS n FROM object_sets.object_set WHERE id = $1`, [id])).rows[0].n;
      expect(await stored()).toBe(1);
      expect(await t.objectSets.get(ObjectSetsService).sweepExpired()).toBeGreaterThanOrEqual(1);
      expect(await stored()).toBe(0);
      expect((await t.db.query(`SELECT count(*)::int AS n FROM object_sets.members_cache WHERE set_id = $1`, [id])).rows[0].n).toBe(0);
    });

    it('an expired ephemeral set that a live set uses, directly or through another expired set, is kept and keeps serving it', async () => {
      const inner = await create({ type: 'filter', filter: { filter: f.tag('vip') } }, { ephemeral: true });
      const outer = await create({ type: 'filter', filter: { filter: f.all(), startingSet: inner } }, { ephemeral: true });
      const live = await create({ type: 'operation', operation: { operator: 'UNION', objectSetIds: [outer] } });
      const alone = await create({ type: 'empty', empty: {} }, { ephemeral: true });
      clock.advance(EPHEMERAL_SET_TTL_S * 1000);
      const vipMembers = { prod: ['p-1', 'p-2', 'p-5'], staging: ['p-1'] };
      const stored = async (id: string) =>
        (await t.db.query(`SELECT count(*)::int AS n FROM object_sets.object_set WHERE id = $1`, [id])).rows[0].n;
      const sweeps = t.objectSets.get(ObjectSetsService);
      for (let round = 0; round < 2; round++) {
        await expectMembers(live, vipMembers);
        for (const gone of [inner, outer, alone]) await t.setsHttp().get(`/object-sets/${gone}/metadata`).expect(404);
        await sweeps.sweepExpired();
        expect([await stored(inner), await stored(outer), await stored(alone)]).toEqual([1, 1, 0]);
      }
      await t.setsHttp().delete(`/object-sets/${live}`).set('x-user-id', 'ada').expect(204);
      await sweeps.sweepExpired();
      expect([await stored(inner), await stored(outer)]).toEqual([0, 0]);
    });

    it('the expiry sweep removes expired ephemeral sets and counts exactly those', async () => {
      for (const title of ['tmp-a', 'tmp-b']) {
        await t
          .setsHttp()
          .post('/object-sets')
          .send({ title, definition: { type: 'empty', empty: {} }, ephemeral: true })
          .expect(201);
      }
      clock.advance(EPHEMERAL_SET_TTL_S * 1000);
      const expired = async () =>
        (await t.db.query(`SELECT count(*)::int AS n FROM object_sets.object_set WHERE expires_at <= $1`, [clock.now().toISOString()]))
          .rows[0].n;
      const before = await expired();
      expect(before).toBeGreaterThanOrEqual(2);
      const sweeps = t.objectSets.get(ObjectSetsService);
      expect(await sweeps.sweepExpired()).toBe(before);
      expect(await expired()).toBe(0);
      // Nothing left to remove: 0, which the periodic sweep does not log.
      expect(await sweeps.sweepExpired()).toBe(0);
    });

    it('searchObjects with an unknown startingSet is 404 ObjectSetNotFound', async () => {
      const missing = 'ri.object-set.main.object-set.00000000-0000-0000-0000-000000000001';
      const res = await t.objectsHttp().post('/objects/search').send({ filter: f.all(), startingSet: missing }).expect(404);
      expectError(res.body, 'ObjectSetNotFound', { objectSetId: missing });
    });
  });
});

describe('object sets: the member limit', () => {
  let t: TestBothApps;
  beforeAll(async () => {
    t = await startBothApps({ OBJECT_SET_MEMBER_LIMIT: '3' });
    await seed(t);
  });
  afterAll(() => t?.close());

  it('is 413 ObjectSetTooLarge past the limit, applies to the set asked for only, and does not bind searchObjects', async () => {
    const people = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'people', definition: { type: 'filter', filter: { filter: f.type('person') } } })
        .expect(201)
    ).body.id;
    const res = await t.setsHttp().get(`/object-sets/${people}/members`).expect(413);
    expectError(res.body, 'ObjectSetTooLarge', { objectSetId: people, limit: 3 });
    expect(res.body.errorCode).toBe('REQUEST_ENTITY_TOO_LARGE');
    const vip = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'vip', definition: { type: 'filter', filter: { filter: f.tag('vip'), startingSet: people } } })
        .expect(201)
    ).body.id;
    // 4 members (prod p-1, p-2, p-5; staging p-1): still over; scoped to prod: 3, exactly the limit.
    await t.setsHttp().get(`/object-sets/${vip}/members`).expect(413);
    const prodVip = (
      await t
        .setsHttp()
        .post('/object-sets')
        .send({
          title: 'vip',
          scope: { environmentIds: ['prod'] },
          definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [vip] } },
        })
        .expect(201)
    ).body.id;
    expect((await t.setsHttp().get(`/object-sets/${prodVip}/members`).expect(200)).body.members).toEqual({ prod: ['p-1', 'p-2', 'p-5'] });
    const search = await t.objectsHttp().post('/objects/search').send({ filter: f.all(), startingSet: people }).expect(200);
    expect(search.body.objects).toHaveLength(8);
  });

  it("caps the internal members call's limit at the member limit, whatever the caller asks for", async () => {
    const res = await t.objectsHttp().post('/objects/internal/members').send({ filter: f.all(), limit: 10_000_000 });
    // The contract's "too large" answer (internal-api.contract.ts), at the capped limit.
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ errorCode: 'REQUEST_ENTITY_TOO_LARGE', errorName: 'MembersTooLarge', parameters: { limit: 3 } });
    const within = await t
      .objectsHttp()
      .post('/objects/internal/members')
      .send({ filter: { type: 'objectId', objectId: { ids: ['p-1', 'p-3'] } }, limit: 10_000_000 });
    expect(within.body.members).toEqual({ prod: ['p-1', 'p-3'], staging: ['p-1'] });
  });
});

describe('object sets: the objects app cannot be reached', () => {
  it('answers 503 DependencyUnavailable with Retry-After, and stores nothing', async () => {
    // Port 9 (discard) on loopback: nothing listens there, so every call is refused.
    const t = await startObjectSetsApp({ OBJECTS_URL: 'http://127.0.0.1:9' });
    try {
      const res = await t
        .http()
        .post('/object-sets')
        .send({ title: 'x', definition: { type: 'filter', filter: { filter: { type: 'all', all: {} } } } })
        .expect(503);
      expect(res.body).toMatchObject({
        errorCode: 'UNAVAILABLE',
        errorName: 'DependencyUnavailable',
        parameters: { dependency: 'objects' },
      });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect((await t.db.query('SELECT count(*)::int AS n FROM object_sets.object_set')).rows[0].n).toBe(0);
      const empty = (
        await t
          .http()
          .post('/object-sets')
          .send({ title: 'e', definition: { type: 'empty', empty: {} } })
          .expect(201)
      ).body.id;
      const members = await t.http().get(`/object-sets/${empty}/members`).expect(503);
      expect(members.body.errorName).toBe('DependencyUnavailable');
    } finally {
      await t.close();
    }
  });
});
