import { startBothApps, TestBothApps } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';

/** Hardening of issue 20 that needs no special set-up: bounds on what one request may cost. */
describe('hardening: bounds on one request', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps({ OBJECT_SET_MEMBER_LIMIT: '2' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = ['p-1', 'p-2', 'p-3'].map((id) => ({ environmentId: 'prod', id, type: 'person', properties: [{ id: 'name', value: `N ${id}`, origin: 'crm' }] }));
    await t.objectsHttp().post('/objects/ingest').send({ objects }).expect(200);
  });
  afterAll(() => t.close());

  it("the internal members call's limit is capped by OBJECT_SET_MEMBER_LIMIT, whatever the caller asks for", async () => {
    const res = await t.objectsHttp().post('/objects/internal/members').send({ filter: { type: 'all', all: {} }, limit: 10_000_000 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tooLarge: true, limit: 2 });
    const within = await t.objectsHttp().post('/objects/internal/members').send({ filter: { type: 'objectId', objectId: { ids: ['p-1', 'p-2'] } }, limit: 10_000_000 });
    expect(within.body.members).toEqual({ prod: ['p-1', 'p-2'] });
  });
});
