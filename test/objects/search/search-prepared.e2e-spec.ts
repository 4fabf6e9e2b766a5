import { SqlExecutor } from '@app/platform';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * Search pages run as named prepared statements, one per filter shape (the statement text; the
 * values are parameters), within what a connection keeps prepared (test/platform/database/prepared-statements.e2e-spec.ts).
 * Results must not depend on which way a statement ran, also once PostgreSQL switches a
 * prepared statement to its generic plan (after five runs).
 */
describe('search statements prepared per filter shape', () => {
  let t: TestObjectsApp;
  let calls: unknown[][];
  beforeAll(async () => {
    t = await startObjectsApp();
    await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = Array.from({ length: 40 }, (_, i) => ({
      environmentId: i % 2 ? 'prod' : 'dev',
      id: `p-${String(i).padStart(2, '0')}`,
      type: 'person',
      properties: [{ id: 'name', value: `name-${i % 4}`, origin: 'crm' }],
      tags: [`t${i % 5}`],
    }));
    await t.http().post('/objects/ingest').send({ objects }).expect(200);
    // Every statement reaches PostgreSQL through a pooled client's query (pool.query checks one out;
    // a request's statements check one out themselves, so they can be cancelled): spy there.
    const pool = t.app.get(SqlExecutor).pool as unknown as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
    const spy = jest.spyOn(pool.Client.prototype, 'query');
    calls = spy.mock.calls;
  });
  afterAll(() => t?.close());

  const search = async (filter: unknown) =>
    (await t.http().post('/objects/search').send({ filter }).expect(200)).body.objects as { id: string }[];
  const equals = (env: string, value: string) => ({
    type: 'and',
    and: {
      filters: [
        { type: 'environment', environment: { environmentIds: [env] } },
        { type: 'propertyEquals', propertyEquals: { propertyId: 'name', value } },
      ],
    },
  });
  /** The statement each search ran: its name when prepared, else undefined. */
  const searchStatements = () =>
    calls
      .map((c) => c[0])
      .filter((q) => (typeof q === 'string' ? q : (q as { text: string }).text).includes('FROM objects.object o'))
      .map((q) => (typeof q === 'string' ? undefined : (q as { name: string }).name));

  it('runs one shape as one named statement, with the right rows every time (past the generic-plan switch)', async () => {
    calls.length = 0;
    for (let run = 0; run < 8; run++) {
      const value = `name-${run % 4}`;
      const env = run % 2 ? 'prod' : 'dev';
      const expected = Array.from({ length: 40 }, (_, i) => i)
        .filter((i) => i % 4 === run % 4 && (i % 2 ? 'prod' : 'dev') === env)
        .map((i) => `p-${String(i).padStart(2, '0')}`);
      expect((await search(equals(env, value))).map((o) => o.id)).toEqual(expected);
    }
    const names = searchStatements();
    expect(names).toHaveLength(8);
    expect(new Set(names).size).toBe(1);
    expect(names[0]).toMatch(/^search\./);
  });

  it('aggregations are prepared per shape too, ordered pages run unnamed (planned for their values), and both answer the same on every run', async () => {
    calls.length = 0;
    const named = () =>
      calls
        .map((c) => c[0])
        .filter((q) => typeof q !== 'string' && /objects\.(object|property_value)/.test((q as { text: string }).text))
        .map((q) => (q as { name?: string }).name);
    const ordered = { filter: { type: 'all', all: {} }, orderBy: [{ propertyId: 'name', direction: 'DESC' }] };
    const first = (await t.http().post('/objects/search').query({ pageSize: 7 }).send(ordered).expect(200)).body;
    for (let run = 0; run < 7; run++) {
      const again = (await t.http().post('/objects/search').query({ pageSize: 7 }).send(ordered).expect(200)).body;
      expect(again).toEqual(first);
      await t.http().post('/objects/search').query({ pageSize: 7, pagingToken: first.pagingToken }).send(ordered).expect(200);
    }
    const aggregation = {
      filter: { type: 'all', all: {} },
      groupBy: [{ type: 'exact', exact: { propertyId: 'name' } }],
      metrics: [{ type: 'count', count: {} }],
    };
    const groups = (await t.http().post('/objects/aggregate').send(aggregation).expect(200)).body;
    expect(groups.groups).toEqual(['name-0', 'name-1', 'name-2', 'name-3'].map((name) => ({ key: { name }, metrics: { count: 10 } })));
    for (let run = 0; run < 6; run++)
      expect((await t.http().post('/objects/aggregate').send(aggregation).expect(200)).body).toEqual(groups);
    const names = named();
    // 15 ordered pages (8 first, 7 next), unnamed; then 7 aggregations, one prepared shape.
    expect(names).toHaveLength(22);
    expect(names.slice(0, 15)).toEqual(Array(15).fill(undefined));
    expect(new Set(names.slice(15)).size).toBe(1);
    expect(names[15]).toMatch(/^search\./);
  });
});
