import { startObjectsApp, TestObjectsApp } from './support/apps';

describe('the HTTP pipeline shared by both apps', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp({ BODY_LIMIT: '1kb' });
  });
  afterAll(() => t?.close());

  it.each([
    ['an array', '[]'],
    ['a string', '"x"'],
    ['null', 'null'],
    ['a number', '42'],
  ])('rejects %s as a body with 400 InvalidArgument', async (_n, body) => {
    const res = await t.http().put('/ontology').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body.errorName).toBe('InvalidArgument');
  });

  it('rejects a body that is not JSON', async () => {
    const res = await t.http().put('/ontology').set('Content-Type', 'text/plain').send('hello');
    expect(res.status).toBe(400);
    expect(res.body.errorName).toBe('InvalidArgument');
  });

  it('rejects a body over BODY_LIMIT with 413 PayloadTooLarge', async () => {
    const res = await t.http().put('/ontology').send({ objectTypes: [{ id: 'x'.repeat(2000), properties: [] }], linkTypes: [] });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ errorCode: 'REQUEST_ENTITY_TOO_LARGE', errorName: 'PayloadTooLarge' });
  });

  it('sends a request id and serves the Swagger document with the seed operation names', async () => {
    const ontology = await t.http().get('/ontology').expect(200);
    expect(ontology.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const res = await t.http().get('/docs/objects-json').expect(200);
    const ops = Object.values(res.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    expect(ops).toEqual(expect.arrayContaining(['getOntology', 'publishOntology', 'putOntologyObject', 'ingestOntologyObjects']));
  });
});
