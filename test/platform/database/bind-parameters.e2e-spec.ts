import { SqlExecutor } from '@app/platform';
import { SearchRepository } from '../../../apps/objects/src/search/search.repository';
import { startBothApps, startObjectsApp, TestBothApps, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * PostgreSQL takes at most 65,535 bind parameters in one statement (the Bind message counts them
 * in 16 bits; past that the count wraps and the server refuses the statement with SQLSTATE 08P01,
 * which used to be answered 503 DependencyUnavailable, forever). The compiler counts them: a
 * filter that needs more is 400 InvalidFilter when it arrives, and a set definition that would is
 * 400 InvalidObjectSetDefinition when it is written. A protocol violation that still reaches
 * PostgreSQL is a 500 Internal, never a 503 to retry.
 */
describe('bind parameters within what PostgreSQL takes', () => {
  /** An `or` of 999 four-bound ranges (1,000 nodes, a client filter's most): 4,995 parameters. */
  const ranges = {
    type: 'or',
    or: {
      filters: Array.from({ length: 999 }, (_, i) => ({
        type: 'propertyRange',
        propertyRange: { propertyId: 'age', gt: i, gte: i, lt: 100_000 + i, lte: 100_000 + i },
      })),
    },
  };
  const union = (objectSetIds: string[]) => ({ type: 'operation', operation: { operator: 'UNION', objectSetIds } });

  describe('both apps', () => {
    let t: TestBothApps;
    /** 19 sets, each the `or` of 999 ranges. */
    const sets: string[] = [];
    const create = (definition: unknown) => t.setsHttp().post('/object-sets').set('x-user-id', 'ada').send({ title: 'ranges', definition });

    beforeAll(async () => {
      t = await startBothApps();
      await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
      await t
        .objectsHttp()
        .put('/objects/prod/p-1')
        .send({ type: 'person', properties: [{ id: 'age', value: 40, origin: 'crm' }] })
        .expect(201);
      for (let i = 0; i < 19; i++) sets.push((await create({ type: 'filter', filter: { filter: ranges } }).expect(201)).body.id);
    });
    afterAll(() => t?.close());

    it('a UNION of 19 sets of 999 four-bound ranges (19,001 nodes, 94,905 parameters) is refused when written, by POST and by PUT', async () => {
      const refused = await create(union(sets));
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        errorCode: 'INVALID_ARGUMENT',
        errorName: 'InvalidObjectSetDefinition',
        parameters: {
          path: 'definition',
          reason: expect.stringMatching(/the definition needs more than 65535 bind parameters, the most PostgreSQL takes in one statement/),
        },
      });
      const small = (await create(union(sets.slice(0, 2))).expect(201)).body.id;
      const put = await t
        .setsHttp()
        .put(`/object-sets/${small}`)
        .set('x-user-id', 'ada')
        .send({ definition: union(sets) });
      expect(put.status).toBe(400);
      expect(put.body).toMatchObject({ errorName: 'InvalidObjectSetDefinition', parameters: { path: 'definition' } });
      // Nothing of either was stored: the small set still has its own definition.
      expect((await t.setsHttp().get(`/object-sets/${small}/metadata`).set('x-user-id', 'ada').expect(200)).body.definition).toEqual(
        union(sets.slice(0, 2)),
      );
    });

    it('a UNION of 13 of them (64,935 parameters: past the upper bound, within the limit) is written; a search on it past the limit is 400 InvalidFilter', async () => {
      const thirteen = (await create(union(sets.slice(0, 13))).expect(201)).body.id;
      // Its 64,935 and a filter's 1,000 more (200 ranges) pass 65,535 together.
      const search = await t
        .objectsHttp()
        .post('/objects/search')
        .send({ startingSet: thirteen, filter: { type: 'or', or: { filters: ranges.or.filters.slice(0, 200) } } });
      expect(search.status).toBe(400);
      expect(search.body).toMatchObject({
        errorName: 'InvalidFilter',
        parameters: { path: 'filter', reason: expect.stringContaining('65535 bind parameters') },
      });
    });

    it('a compiled filter past the limit is 400 InvalidFilter at the objects app (path filter), before any statement', async () => {
      const filter = { type: 'or', or: { filters: Array.from({ length: 19 }, () => ranges) } };
      const res = await t.objectsHttp().post('/objects/internal/members').send({ filter, limit: 10 });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        errorName: 'InvalidFilter',
        parameters: { path: 'filter', reason: expect.stringContaining('more than 65535 bind parameters') },
      });
    });
  });

  describe('a statement PostgreSQL refuses as a protocol violation (08P01)', () => {
    let t: TestObjectsApp;
    beforeAll(async () => {
      // A search page whose statement carries 65,537 values for one placeholder: the count sent
      // wraps to 1, and the server cannot read the rest of the message.
      t = await startObjectsApp(
        { DB_POOL_SIZE: '1' },
        {
          overrides: (m) =>
            m.overrideProvider(SearchRepository).useFactory({
              inject: [SqlExecutor],
              factory: (sql: SqlExecutor) => {
                const repository = new SearchRepository(sql);
                repository.page = () => sql.rows('SELECT $1::text AS env', Array(65_537).fill('x'));
                return repository;
              },
            }),
        },
      );
      await t.http().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
      await t.http().put('/objects/prod/p-1').send({ type: 'person', properties: [] }).expect(201);
    });
    afterAll(() => t?.close());

    it('answers 500 Internal, not a 503 to retry, and the app goes on answering', async () => {
      const res = await t
        .http()
        .post('/objects/search')
        .send({ filter: { type: 'all', all: {} } });
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ errorCode: 'INTERNAL', errorName: 'Internal' });
      expect(res.headers['retry-after']).toBeUndefined();
      await t.http().get('/objects/p-1').expect(200);
    });
  });
});
