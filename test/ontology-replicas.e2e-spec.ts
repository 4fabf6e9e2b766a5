import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { buildObjectsApp, startObjectsApp, TestObjectsApp, withEnv } from './support/apps';

/**
 * Two replicas of the objects app on one database. Reads (search, set members) validate and
 * compile against the ontology version their replica last saw active, and their statement reports
 * the version active when it ran; these tests publish through one replica and read through the
 * other, so the reader's assumption is always stale, and check that it never answers with it.
 */
describe('ontology versions published by another replica', () => {
  let writer: TestObjectsApp;
  let reader: NestExpressApplication;
  const readerHttp = () => request(reader.getHttpServer());

  const ship = (...extra: { id: string; type: string }[]) => ({ id: 'ship', properties: [{ id: 'name', type: 'string' }, ...extra] });
  // These versions take away what stored objects use, on purpose, and no object-sets app runs here: forced (docs/api.md §6).
  const publish = (objectTypes: object[]) => writer.http().put('/ontology').query({ force: true }).send({ objectTypes, linkTypes: [] }).expect(200);
  const search = (filter: object) => readerHttp().post('/objects/search').send({ filter });
  const members = (filter: object) => readerHttp().post('/objects/internal/members').send({ filter, limit: 100 });
  const ids = (res: request.Response) => (res.body.objects as { id: string }[]).map((o) => o.id);

  beforeAll(async () => {
    writer = await startObjectsApp();
    reader = await withEnv({ LOG_LEVEL: 'silent', DATABASE_URL: writer.databaseUrl }, async () => {
      const app = await buildObjectsApp();
      await app.init();
      return app;
    });
    await publish([ship({ id: 'legacyCode', type: 'string' })]);
    await writer
      .http()
      .put('/objects/prod/ship-1')
      .send({
        type: 'ship',
        properties: [
          { id: 'name', value: 'Endeavour', origin: 'registry' },
          { id: 'legacyCode', value: 'X1', origin: 'registry' },
        ],
      })
      .expect(201);
    // The reader now knows the first version as the active one.
    expect(ids(await search({ type: 'objectType', objectType: { types: ['ship'] } }).expect(200))).toEqual(['ship-1']);
  });
  afterAll(async () => {
    await reader?.close();
    await writer?.close();
  });

  it('a search naming a type published since is answered, not refused as unknown', async () => {
    await publish([ship({ id: 'legacyCode', type: 'string' }), { id: 'port', properties: [{ id: 'name', type: 'string' }] }]);
    await writer.http().put('/objects/prod/port-7').send({ type: 'port', properties: [{ id: 'name', value: 'Plymouth', origin: 'registry' }] }).expect(201);
    const res = await search({ type: 'objectType', objectType: { types: ['port'] } });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(['port-7']);
  });

  it('a search on a property removed since is InvalidFilter, although the stale version would have matched', async () => {
    await publish([ship(), { id: 'port', properties: [{ id: 'name', type: 'string' }] }]);
    const res = await search({ type: 'propertyEquals', propertyEquals: { propertyId: 'legacyCode', value: 'X1' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ errorName: 'InvalidFilter', parameters: { path: 'filter.propertyEquals.propertyId' } });
  });

  it('set members are checked the same way: a property removed since is InvalidFilter', async () => {
    await publish([{ id: 'ship', properties: [{ id: 'legacyCode', type: 'string' }] }, { id: 'port', properties: [] }]);
    const res = await members({ type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Endeavour' } });
    expect(res.status).toBe(400);
    expect(res.body.errorName).toBe('InvalidFilter');
  });

  it('a search with no hits is checked too: a type removed since is InvalidFilter', async () => {
    await publish([{ id: 'ship', properties: [{ id: 'legacyCode', type: 'string' }] }]);
    const filter = { type: 'and', and: { filters: [{ type: 'objectType', objectType: { types: ['port'] } }, { type: 'objectId', objectId: { ids: ['no-such-port'] } }] } };
    const res = await search(filter);
    expect(res.status).toBe(400);
    expect(res.body.errorName).toBe('InvalidFilter');
    // The reader now holds the newest version: a filter it allows is answered from it.
    expect(ids(await search({ type: 'propertyEquals', propertyEquals: { propertyId: 'legacyCode', value: 'X1' } }).expect(200))).toEqual(['ship-1']);
  });
});
