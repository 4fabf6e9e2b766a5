import { DataSource } from 'typeorm';
import { objectSetsDataSourceOptions } from '../../apps/object-sets/src/database/data-source';
import { startBothApps, TestBothApps } from '../support/apps';
import { ObjectSetHistory1764917000000 } from '../../apps/object-sets/src/database/migrations/1764917000000-ObjectSetHistory';
import { WRITE_ONTOLOGY } from '../support/ontologies';
import { bearer, JWT_ENV, token } from '../support/tokens';
import { instant, SIGHTED } from '../support/instants';

/**
 * Object sets as of an instant (docs/api.md §10): members, metadata and aggregates read with the
 * definitions valid then (the set's own and every set it referenced, deleted ones included) over
 * the objects as they were then; and the diff of a set's members between two instants.
 */

const person = (name: string, age: number, tags: string[] = []) => ({
  type: 'person',
  properties: [
    { id: 'age', value: age, origin: 'crm' },
    { id: 'name', value: name, origin: 'crm' },
  ],
  tags,
  metadata: SIGHTED,
});
const q = (t: string) => encodeURIComponent(t);

describe('object sets as of an instant, and set diffs', () => {
  let app: TestBothApps;
  let before: string;
  let t1: string;
  let t2: string;
  let t3: string;
  let adults: string; // filter set: age >= 18, later >= 30
  let vips: string; // filter set: tag vip
  let both: string; // operation INTERSECTION(adults, vips)
  let gone: string; // a set deleted after t2

  const create = async (title: string, definition: unknown) =>
    (await app.setsHttp().post('/object-sets').send({ title, definition }).expect(201)).body.id as string;
  const members = async (id: string, asOf?: string) => {
    const res = await app.setsHttp().get(`/object-sets/${q(id)}/members${asOf ? `?asOf=${q(asOf)}` : ''}`);
    expect(res.status).toBe(200);
    if (asOf) expect(res.body.asOf).toBe(asOf);
    return res.body.members as Record<string, string[]>;
  };
  const ageAtLeast = (n: number) => ({
    type: 'filter',
    filter: { filter: { type: 'propertyRange', propertyRange: { propertyId: 'age', gte: n } } },
  });

  beforeAll(async () => {
    app = await startBothApps();
    await app.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    before = await instant();
    await app
      .objectsHttp()
      .put('/objects/prod/a')
      .send(person('A', 20, ['vip']))
      .expect(201);
    await app
      .objectsHttp()
      .put('/objects/prod/b')
      .send(person('B', 40, ['vip']))
      .expect(201);
    await app.objectsHttp().put('/objects/staging/c').send(person('C', 25)).expect(201);
    await app
      .objectsHttp()
      .put('/objects/staging/d')
      .send(person('D', 10, ['vip']))
      .expect(201);
    adults = await create('adults', ageAtLeast(18));
    vips = await create('vips', { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } });
    both = await create('adult vips', { type: 'operation', operation: { operator: 'INTERSECTION', objectSetIds: [adults, vips] } });
    gone = await create('to be deleted', { type: 'stable', stable: { objects: [{ environmentId: 'prod', id: 'a' }] } });
    t1 = await instant();
    // The referenced set's definition changes, an object changes, another appears.
    await app
      .setsHttp()
      .put(`/object-sets/${q(adults)}`)
      .send({ title: 'over 30', definition: ageAtLeast(30) })
      .expect(200);
    await app
      .objectsHttp()
      .put('/objects/staging/d')
      .send(person('D', 35, ['vip']))
      .expect(200);
    await app.objectsHttp().put('/objects/staging/e').send(person('E', 50)).expect(201);
    t2 = await instant();
    // The top set's own definition changes; a member is deleted; a set is deleted.
    await app
      .setsHttp()
      .put(`/object-sets/${q(both)}`)
      .send({ definition: { type: 'operation', operation: { operator: 'UNION', objectSetIds: [adults, vips] } } })
      .expect(200);
    await app.objectsHttp().delete('/objects/prod/b').expect(204);
    await app
      .setsHttp()
      .delete(`/object-sets/${q(gone)}`)
      .expect(204);
    t3 = await instant();
  });
  afterAll(() => app?.close());

  it('reads members with the definitions and objects of each instant, through a referenced set that changed', async () => {
    expect(await members(both, t1)).toEqual({ prod: ['a', 'b'] });
    // adults became >= 30: a (20) left; d turned 35 and is a vip.
    expect(await members(both, t2)).toEqual({ prod: ['b'], staging: ['d'] });
    // UNION now; b deleted.
    expect(await members(both, t3)).toEqual({ prod: ['a'], staging: ['d', 'e'] });
    expect(await members(both)).toEqual({ prod: ['a'], staging: ['d', 'e'] });
    expect(await members(adults, t1)).toEqual({ prod: ['a', 'b'], staging: ['c'] });
  });

  it('answers the same as of T whatever the consistency (a past state is never read from the cache)', async () => {
    await app
      .setsHttp()
      .get(`/object-sets/${q(both)}/members?consistency=EVENTUALLY`)
      .expect(200); // fills the cache with the present
    const eventually = await app
      .setsHttp()
      .get(`/object-sets/${q(both)}/members?consistency=EVENTUALLY&asOf=${q(t1)}`)
      .expect(200);
    expect(eventually.body).toMatchObject({ members: { prod: ['a', 'b'] }, asOf: t1 });
  });

  it('returns the links among members as of T and omits asOf without it', async () => {
    const res = await app
      .setsHttp()
      .get(`/object-sets/${q(both)}/members`)
      .expect(200);
    expect(res.body.asOf).toBeUndefined();
    expect(res.body.links).toEqual([]);
  });

  it('reads a set deleted since as of a time it existed, and 404 where it did not exist', async () => {
    expect(await members(gone, t1)).toEqual({ prod: ['a'] });
    await app
      .setsHttp()
      .get(`/object-sets/${q(gone)}/members`)
      .expect(404);
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(gone)}/members?asOf=${q(t3)}`)
          .expect(404)
      ).body.errorName,
    ).toBe('ObjectSetNotFound');
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(both)}/members?asOf=${q(before)}`)
          .expect(404)
      ).body,
    ).toMatchObject({
      errorName: 'ObjectSetNotFound',
      parameters: { objectSetId: both },
    });
    const meta = await app
      .setsHttp()
      .get(`/object-sets/${q(gone)}/metadata?asOf=${q(t1)}`)
      .expect(200);
    expect(meta.body).toMatchObject({ id: gone, title: 'to be deleted', asOf: t1 });
    await app
      .setsHttp()
      .get(`/object-sets/${q(gone)}/metadata?asOf=${q(t3)}`)
      .expect(404);
  });

  it('returns metadata as it was', async () => {
    const then = await app
      .setsHttp()
      .get(`/object-sets/${q(adults)}/metadata?asOf=${q(t1)}`)
      .expect(200);
    expect(then.body).toMatchObject({ title: 'adults', definition: ageAtLeast(18), asOf: t1 });
    const now = await app
      .setsHttp()
      .get(`/object-sets/${q(adults)}/metadata`)
      .expect(200);
    expect(now.body).toMatchObject({ title: 'over 30', definition: ageAtLeast(30) });
    expect(now.body.asOf).toBeUndefined();
  });

  it('rejects a future or malformed asOf with 400', async () => {
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(both)}/members?asOf=${q(future)}`)
          .expect(400)
      ).body.errorName,
    ).toBe('InvalidArgument');
    await app
      .setsHttp()
      .get(`/object-sets/${q(both)}/metadata?asOf=nope`)
      .expect(400);
    await app
      .setsHttp()
      .post(`/object-sets/${q(both)}/aggregate`)
      .send({ metrics: [{ type: 'count', count: {} }], asOf: future })
      .expect(400);
  });

  it('aggregates a set as of T', async () => {
    const res = await app
      .setsHttp()
      .post(`/object-sets/${q(both)}/aggregate`)
      .send({ groupBy: [{ type: 'exact', exact: { attribute: 'environmentId' } }], metrics: [{ type: 'count', count: {} }], asOf: t2 })
      .expect(200);
    expect(res.body).toEqual({
      groups: [
        { key: { environmentId: 'prod' }, metrics: { count: 1 } },
        { key: { environmentId: 'staging' }, metrics: { count: 1 } },
      ],
      truncated: false,
      asOf: t2,
    });
  });

  it('uses the startingSet as of the search instant', async () => {
    const res = await app
      .objectsHttp()
      .post('/objects/search')
      .send({ filter: { type: 'all', all: {} }, startingSet: both, asOf: t1 })
      .expect(200);
    expect(res.body.objects.map((o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`)).toEqual(['prod/a', 'prod/b']);
  });

  it('keeps the history of sets written by SQL outside the API too (as npm start loads the demo sets)', async () => {
    const id = 'ri.object-set.main.object-set.00000000-0000-4000-8000-00000000abcd';
    await app.db.query(
      `INSERT INTO object_sets.object_set (id, title, definition, creator, created_at, updated_at)
       VALUES ($1, 'by SQL', '{"type": "stable", "stable": {"objects": [{"environmentId": "prod", "id": "a"}]}}', 'anonymous', now(), now())`,
      [id],
    );
    const at = await instant();
    await app.db.query(`UPDATE object_sets.object_set SET title = 'renamed', updated_at = now() WHERE id = $1`, [id]);
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(id)}/metadata?asOf=${q(at)}`)
          .expect(200)
      ).body.title,
    ).toBe('by SQL');
    expect(await members(id, at)).toEqual({ prod: ['a'] });
    await app.db.query(`DELETE FROM object_sets.object_set WHERE id = $1`, [id]);
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(id)}/metadata?asOf=${q(at)}`)
          .expect(200)
      ).body.title,
    ).toBe('by SQL');
  });

  describe('GET /object-sets/{id}/diff', () => {
    it('lists what entered and left between two instants, by environment, ids sorted, empty environments left out', async () => {
      const res = await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff?from=${q(t1)}&to=${q(t2)}`)
        .expect(200);
      expect(res.body).toEqual({ added: { staging: ['d'] }, removed: { prod: ['a'] } });
      const later = await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff?from=${q(t2)}&to=${q(t3)}`)
        .expect(200);
      expect(later.body).toEqual({ added: { prod: ['a'], staging: ['e'] }, removed: { prod: ['b'] } });
      const same = await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff?from=${q(t3)}`)
        .expect(200);
      expect(same.body).toEqual({ added: {}, removed: {} });
    });

    it('defaults `to` to now, and counts a set created after `from` as empty then', async () => {
      const res = await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff?from=${q(before)}`)
        .expect(200);
      expect(res.body).toEqual({ added: { prod: ['a'], staging: ['d', 'e'] }, removed: {} });
      const adultsSince = await app
        .setsHttp()
        .get(`/object-sets/${q(adults)}/diff?from=${q(t1)}`)
        .expect(200);
      expect(adultsSince.body).toEqual({ added: { staging: ['d', 'e'] }, removed: { prod: ['a', 'b'], staging: ['c'] } });
    });

    it('rejects from >= to, a missing from, a future bound, and answers 404 for a set absent at `to`', async () => {
      expect(
        (
          await app
            .setsHttp()
            .get(`/object-sets/${q(both)}/diff?from=${q(t2)}&to=${q(t1)}`)
            .expect(400)
        ).body.errorName,
      ).toBe('InvalidArgument');
      await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff?from=${q(t2)}&to=${q(t2)}`)
        .expect(400);
      await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff`)
        .expect(400);
      await app
        .setsHttp()
        .get(`/object-sets/${q(both)}/diff?from=${q(new Date(Date.now() + 3_600_000).toISOString())}`)
        .expect(400);
      await app
        .setsHttp()
        .get(`/object-sets/${q(gone)}/diff?from=${q(t1)}`)
        .expect(404);
      const deleted = await app
        .setsHttp()
        .get(`/object-sets/${q(gone)}/diff?from=${q(before)}&to=${q(t1)}`)
        .expect(200);
      expect(deleted.body).toEqual({ added: { prod: ['a'] }, removed: {} });
    });
  });

  // Last: it rebuilds the history table from the sets as they are now.
  it('backfills the sets that exist when the migration runs: each known from its creation, as it is then', async () => {
    // The migration runs on a TypeORM QueryRunner, as the app's migrations do (the app itself runs no TypeORM).
    const ds = await new DataSource(objectSetsDataSourceOptions(app.databaseUrl, 1)).initialize();
    const runner = ds.createQueryRunner();
    try {
      await runner.startTransaction();
      await runner.query('DROP TRIGGER object_set_history ON object_sets.object_set');
      await runner.query('DROP FUNCTION object_sets.object_set_history()');
      await runner.query('DROP TABLE object_sets.object_set_version');
      await new ObjectSetHistory1764917000000().up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
      await ds.destroy();
    }
    // adults: created before t1 with ">= 18", now ">= 30": as of t1 it reads as it is now.
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(adults)}/metadata?asOf=${q(t1)}`)
          .expect(200)
      ).body,
    ).toMatchObject({ title: 'over 30', definition: ageAtLeast(30) });
    await app
      .setsHttp()
      .get(`/object-sets/${q(adults)}/metadata?asOf=${q(before)}`)
      .expect(404);
    // The trigger is back: a change after the backfill is versioned again.
    const at = await instant();
    await app
      .setsHttp()
      .put(`/object-sets/${q(adults)}`)
      .send({ title: 'thirty and over' })
      .expect(200);
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(adults)}/metadata?asOf=${q(at)}`)
          .expect(200)
      ).body.title,
    ).toBe('over 30');
  });
});

describe('set diffs past the member limit', () => {
  let app: TestBothApps;
  afterAll(() => app?.close());

  it('answers 413 ObjectSetTooLarge when either side has more members than the limit', async () => {
    app = await startBothApps({ OBJECT_SET_MEMBER_LIMIT: '2' });
    await app.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    await app.objectsHttp().put('/objects/prod/a').send(person('A', 1)).expect(201);
    const id = (
      await app
        .setsHttp()
        .post('/object-sets')
        .send({ title: 'all', definition: { type: 'filter', filter: { filter: { type: 'all', all: {} } } } })
        .expect(201)
    ).body.id;
    const t1 = await instant();
    await app.objectsHttp().put('/objects/prod/b').send(person('B', 2)).expect(201);
    await app.objectsHttp().put('/objects/staging/c').send(person('C', 3)).expect(201);
    const res = await app
      .setsHttp()
      .get(`/object-sets/${q(id)}/diff?from=${q(t1)}`)
      .expect(413);
    expect(res.body).toMatchObject({ errorName: 'ObjectSetTooLarge', parameters: { objectSetId: id, limit: 2 } });
    await app.objectsHttp().delete('/objects/staging/c').expect(204);
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(id)}/diff?from=${q(t1)}`)
          .expect(200)
      ).body,
    ).toEqual({ added: { prod: ['b'] }, removed: {} });
  });
});

describe('visibility as of T (AUTH_MODE=jwt)', () => {
  let app: TestBothApps;
  afterAll(() => app?.close());

  it('hides other environments from every read as of T, through links and sets too', async () => {
    app = await startBothApps(JWT_ENV);
    const root = await token('root', ['*'], { roles: ['ontology-admin'] });
    const ada = await token('ada', ['alpha']);
    await app.objectsHttp().put('/ontology').set(bearer(root)).send(WRITE_ONTOLOGY).expect(200);
    const write = (env: string, id: string, body: object, status: number) =>
      app.objectsHttp().put(`/objects/${env}/${id}`).set(bearer(root)).send(body).expect(status);
    await write('alpha', 'a-1', { ...person('A', 20, ['vip']), links: { knows: ['s-1'] } }, 201);
    await write('beta', 's-1', { ...person('Secret', 30, ['vip']), links: { knows: ['a-1'] } }, 201);
    const vips = (
      await app
        .setsHttp()
        .post('/object-sets')
        .set(bearer(ada))
        .send({ title: 'vips', definition: { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } } })
        .expect(201)
    ).body.id;
    const t1 = await instant();
    await write('alpha', 'a-1', person('A', 21), 200);
    await write('beta', 's-1', person('Secret', 31), 200);

    const as = (tok: string) => ({ ...bearer(tok) });
    // Load and bulk: the beta object is invisible to ada as of t1, visible to root.
    await app
      .objectsHttp()
      .get(`/objects/s-1?asOf=${q(t1)}`)
      .set(as(ada))
      .expect(404);
    await app
      .objectsHttp()
      .get(`/objects/s-1?asOf=${q(t1)}`)
      .set(as(root))
      .expect(200);
    const bulk = await app
      .objectsHttp()
      .post('/objects/bulk')
      .set(as(ada))
      .send({ objectIds: ['a-1', 's-1'], asOf: t1 })
      .expect(200);
    expect(bulk.body.objects.map((o: { id: string }) => o.id)).toEqual(['a-1']);
    // Search: no beta object, and none reached through a link into beta.
    const search = async (tok: string, filter: unknown) =>
      (await app.objectsHttp().post('/objects/search').set(as(tok)).send({ filter, asOf: t1 }).expect(200)).body.objects.map(
        (o: { environmentId: string; id: string }) => `${o.environmentId}/${o.id}`,
      );
    expect(await search(ada, { type: 'tag', tag: { tags: ['vip'] } })).toEqual(['alpha/a-1']);
    expect(await search(root, { type: 'tag', tag: { tags: ['vip'] } })).toEqual(['alpha/a-1', 'beta/s-1']);
    const throughHidden = {
      type: 'linkedFrom',
      linkedFrom: { linkId: 'knows', source: { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Secret' } } },
    };
    expect(await search(ada, throughHidden)).toEqual([]);
    // Set members, aggregate and diff as of t1 for ada: alpha only.
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(vips)}/members?asOf=${q(t1)}`)
          .set(as(ada))
          .expect(200)
      ).body.members,
    ).toEqual({ alpha: ['a-1'] });
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(vips)}/members?asOf=${q(t1)}`)
          .set(as(root))
          .expect(200)
      ).body.members,
    ).toEqual({ alpha: ['a-1'], beta: ['s-1'] });
    const agg = await app
      .setsHttp()
      .post(`/object-sets/${q(vips)}/aggregate`)
      .set(as(ada))
      .send({ metrics: [{ type: 'count', count: {} }], asOf: t1 })
      .expect(200);
    expect(agg.body.groups).toEqual([{ key: {}, metrics: { count: 1 } }]);
    expect(
      (
        await app
          .setsHttp()
          .get(`/object-sets/${q(vips)}/diff?from=${q(t1)}`)
          .set(as(ada))
          .expect(200)
      ).body,
    ).toEqual({ added: {}, removed: { alpha: ['a-1'] } });
    // Credentials first: 401 before anything else.
    await app
      .setsHttp()
      .get(`/object-sets/${q(vips)}/diff?from=${q(t1)}`)
      .expect(401);
    await app
      .objectsHttp()
      .get(`/objects/a-1?asOf=${q(t1)}`)
      .expect(401);
  });
});
