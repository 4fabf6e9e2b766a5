import { ObjectSetsService } from '../../apps/object-sets/src/object-sets/object-sets.service';
import { startBothApps, TestBothApps } from '../support/apps';
import { bearer, JWT_ENV, token } from '../support/tokens';
import { WRITE_ONTOLOGY } from '../support/ontologies';

/**
 * Sets and who may see them (docs/api.md §5), AUTH_MODE=jwt: a set whose scope names an
 * environment the caller cannot see does not exist for that caller (metadata, search, members,
 * references), a scope names only environments its writer sees, and a set that other users' sets
 * use can still be deleted by its creator (it is retired: those sets keep working).
 */
const tag = (t: string) => ({ type: 'filter', filter: { filter: { type: 'tag', tag: { tags: [t] } } } });
const union = (...objectSetIds: string[]) => ({ type: 'operation', operation: { operator: 'UNION', objectSetIds } });

describe('set scope and visibility, references and deletes across users (AUTH_MODE=jwt)', () => {
  let t: TestBothApps;
  let root: string;
  let ada: string;
  let bob: string;

  beforeAll(async () => {
    t = await startBothApps(JWT_ENV);
    root = await token('root', ['*'], { roles: ['ontology-admin'] });
    ada = await token('ada', ['prod', 'secret']);
    bob = await token('bob', ['prod']);
    await t.objectsHttp().put('/ontology').set(bearer(root)).send(WRITE_ONTOLOGY).expect(200);
    const person = (environmentId: string, id: string) => ({ environmentId, id, type: 'person', properties: [], tags: ['vip'] });
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .set(bearer(root))
      .send({ objects: [person('prod', 'p-1'), person('secret', 's-1')] })
      .expect(200);
  });
  afterAll(() => t?.close());

  const create = async (tok: string, title: string, definition: unknown, scope?: string[]) =>
    (
      await t
        .setsHttp()
        .post('/object-sets')
        .set(bearer(tok))
        .send({ title, definition, ...(scope ? { scope: { environmentIds: scope } } : {}) })
        .expect(201)
    ).body.id as string;
  const searchIds = async (tok: string, filter: unknown) =>
    (
      (await t.setsHttp().post('/object-sets/search').set(bearer(tok)).send({ filter }).expect(200)).body.objectSets as { id: string }[]
    ).map((s) => s.id);

  it('hides a set whose scope names an environment the caller cannot see: metadata, search, members', async () => {
    const secret = await create(
      ada,
      'Secret watch list',
      { type: 'filter', filter: { filter: { type: 'objectId', objectId: { ids: ['s-1'] } } } },
      ['secret'],
    );
    const mixed = await create(ada, 'Secret and prod', tag('vip'), ['prod', 'secret']);
    const open = await create(ada, 'Open list', tag('vip'));
    const prod = await create(ada, 'Prod list', tag('vip'), ['prod']);
    for (const id of [secret, mixed]) {
      for (const path of [
        `/object-sets/${id}/metadata`,
        `/object-sets/${id}/members`,
        `/object-sets/${id}/metadata?asOf=${new Date().toISOString()}`,
      ]) {
        const res = await t.setsHttp().get(path).set(bearer(bob));
        expect([path, res.status, res.body.errorName]).toEqual([path, 404, 'ObjectSetNotFound']);
      }
      // ada sees her own sets, and so does anyone who sees their environments
      await t.setsHttp().get(`/object-sets/${id}/metadata`).set(bearer(ada)).expect(200);
    }
    expect((await t.setsHttp().get(`/object-sets/${open}/metadata`).set(bearer(bob)).expect(200)).body.id).toBe(open);
    expect((await t.setsHttp().get(`/object-sets/${prod}/members`).set(bearer(bob)).expect(200)).body.members).toEqual({ prod: ['p-1'] });
    const byAda = { type: 'userId', userId: { userId: 'ada' } };
    expect((await searchIds(bob, byAda)).sort()).toEqual([open, prod].sort());
    expect(await searchIds(bob, { type: 'title', title: { title: 'secret', fuzzy: true } })).toEqual([]);
    expect((await searchIds(ada, byAda)).sort()).toEqual([secret, mixed, open, prod].sort());
    // A search starting from a hidden set is as if the set did not exist.
    const search = await t
      .objectsHttp()
      .post('/objects/search')
      .set(bearer(bob))
      .send({ filter: { type: 'all', all: {} }, startingSet: secret });
    expect([search.status, search.body.errorName]).toEqual([404, 'ObjectSetNotFound']);
  });

  it('refuses a scope naming an environment the writer cannot see (403 PermissionDenied)', async () => {
    const res = await t
      .setsHttp()
      .post('/object-sets')
      .set(bearer(bob))
      .send({ title: 'x', definition: tag('vip'), scope: { environmentIds: ['prod', 'secret'] } });
    expect([res.status, res.body.errorName, res.body.parameters?.environmentId]).toEqual([403, 'PermissionDenied', 'secret']);
    const mine = await create(bob, 'mine', tag('vip'), ['prod']);
    const put = await t
      .setsHttp()
      .put(`/object-sets/${mine}`)
      .set(bearer(bob))
      .send({ scope: { environmentIds: ['secret'] } });
    expect([put.status, put.body.errorName]).toEqual([403, 'PermissionDenied']);
    expect(
      (
        await t.db.query(
          `SELECT count(*)::int AS n FROM object_sets.object_set WHERE scope_environment_ids && '{secret}' AND creator = 'bob'`,
        )
      ).rows[0].n,
    ).toBe(0);
  });

  it('references only sets the caller may read: a hidden one is reported as one that does not exist', async () => {
    const hidden = await create(ada, 'hidden base', tag('vip'), ['secret']);
    const open = await create(ada, 'open base', tag('vip'));
    const res = await t
      .setsHttp()
      .post('/object-sets')
      .set(bearer(bob))
      .send({ title: 'on hidden', definition: union(open, hidden) });
    expect([res.status, res.body.errorName, res.body.parameters?.path]).toEqual([
      400,
      'InvalidObjectSetDefinition',
      'definition.operation.objectSetIds[1]',
    ]);
    expect(res.body.parameters.reason).toBe(`referenced object set ${hidden} does not exist`);
    await create(bob, 'on open', union(open));
  });

  it("lets a creator delete a set other users' sets use: it is retired, their sets keep working until they let go", async () => {
    const base = await create(ada, 'base', { type: 'stable', stable: { objects: [{ environmentId: 'prod', id: 'p-1' }] } });
    const bobs = await create(bob, "bob's, on ada's", union(base));
    // Immutable: bob can never take the reference back himself; ada still deletes hers.
    const frozen = (
      await t
        .setsHttp()
        .post('/object-sets')
        .set(bearer(bob))
        .send({ title: 'frozen', definition: union(base), immutable: true })
        .expect(201)
    ).body.id;
    await t.setsHttp().delete(`/object-sets/${base}`).set(bearer(ada)).expect(204);
    for (const path of [`/object-sets/${base}/metadata`, `/object-sets/${base}/members`]) {
      expect((await t.setsHttp().get(path).set(bearer(ada))).status).toBe(404);
    }
    expect(await searchIds(ada, { type: 'title', title: { title: 'base' } })).toEqual([]);
    for (const id of [bobs, frozen])
      expect((await t.setsHttp().get(`/object-sets/${id}/members`).set(bearer(bob)).expect(200)).body.members).toEqual({ prod: ['p-1'] });
    const anew = await t
      .setsHttp()
      .post('/object-sets')
      .set(bearer(bob))
      .send({ title: 'late', definition: union(base) });
    expect([anew.status, anew.body.errorName]).toEqual([400, 'InvalidObjectSetDefinition']);
    // Stored until no live set uses it.
    const sweep = () => t.objectSets.get(ObjectSetsService).sweepExpired();
    await sweep();
    const stored = async () => (await t.db.query(`SELECT count(*)::int AS n FROM object_sets.object_set WHERE id = $1`, [base])).rows[0].n;
    expect(await stored()).toBe(1);
    await t.setsHttp().delete(`/object-sets/${bobs}`).set(bearer(bob)).expect(204);
    await t.setsHttp().delete(`/object-sets/${frozen}`).set(bearer(bob)).expect(204);
    await sweep();
    expect(await stored()).toBe(0);
  });

  it("still refuses to delete a set the creator's own sets use (409 ObjectSetInUse naming only those)", async () => {
    const base = await create(ada, 'shared base', tag('vip'));
    const adas = await create(ada, "ada's own", union(base));
    await create(bob, "bob's", union(base));
    const res = await t.setsHttp().delete(`/object-sets/${base}`).set(bearer(ada));
    expect([res.status, res.body.errorName, res.body.parameters?.referencedBy]).toEqual([409, 'ObjectSetInUse', [adas]]);
  });
});
