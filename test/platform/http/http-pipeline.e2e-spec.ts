import type { IncomingMessage, ServerResponse } from 'node:http';
import { startObjectsApp, TestObjectsApp } from '../../support/apps';

describe('the HTTP pipeline shared by both apps', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp({ BODY_LIMIT: '1kb', LARGE_BODY_LIMIT: '4kb' });
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

  it('rejects a body over BODY_LIMIT (LARGE_BODY_LIMIT for an ontology) with 413 PayloadTooLarge and the limit in bytes', async () => {
    const search = await t
      .http()
      .post('/objects/search')
      .send({ filter: { type: 'objectType', objectType: { types: ['x'.repeat(2000)] } } });
    expect(search.status).toBe(413);
    expect(search.body).toMatchObject({
      errorCode: 'REQUEST_ENTITY_TOO_LARGE',
      errorName: 'PayloadTooLarge',
      parameters: { limit: '1024' },
    });
    const fits = await t
      .http()
      .put('/ontology')
      .send({ objectTypes: [{ id: 'x'.repeat(2000), properties: [] }], linkTypes: [] });
    expect(fits.status).toBe(400); // read, and refused for the id's length
    const res = await t
      .http()
      .put('/ontology')
      .send({ objectTypes: [{ id: 'x'.repeat(5000), properties: [] }], linkTypes: [] });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ errorCode: 'REQUEST_ENTITY_TOO_LARGE', errorName: 'PayloadTooLarge', parameters: { limit: '4096' } });
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

  it("creates every request and response with Express's prototypes, so Express never re-parents them", async () => {
    const express = t.app.getHttpAdapter().getInstance();
    const server = t.app.getHttpServer();
    const seen: boolean[] = [];
    // Runs before Express's handler: the prototypes are the ones Express would otherwise set.
    const probe = (req: IncomingMessage, res: ServerResponse) =>
      seen.push(Object.getPrototypeOf(req) === express.request && Object.getPrototypeOf(res) === express.response);
    server.prependListener('request', probe);
    try {
      const res = await t.http().get('/objects/nobody?environmentId=prod').expect(404);
      expect(res.body.errorName).toBe('ObjectNotFound');
    } finally {
      server.removeListener('request', probe);
    }
    expect(seen).toEqual([true]);
  });
});
