import { startObjectsApp, TestObjectsApp } from './support/apps';

// Not the shared test ontology: a small one with a displayName, so the round trip of every field shows.
const ONTOLOGY = {
  objectTypes: [
    { id: 'person', displayName: 'Person', properties: [{ id: 'name', type: 'string' }, { id: 'nick', type: 'string', multi: true }] },
    { id: 'company', properties: [{ id: 'name', type: 'string' }] },
  ],
  linkTypes: [{ id: 'worksFor', sourceType: 'person', targetType: 'company' }],
};

describe('ontology: GET /ontology, GET /ontology/versions/{n}, PUT /ontology', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
  });
  afterAll(() => t?.close());

  it('is version 0 and empty before any publish', async () => {
    await t.http().get('/ontology').expect(200, { version: 0, objectTypes: [], linkTypes: [] });
    await t.http().get('/ontology/versions/0').expect(200, { version: 0, objectTypes: [], linkTypes: [] });
  });

  it('publishes version n+1 on every PUT, even an identical one, and makes it active', async () => {
    const first = await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    expect(first.body).toEqual({ version: 1, ...ONTOLOGY });
    const second = await t.http().put('/ontology').send(ONTOLOGY).expect(200);
    expect(second.body.version).toBe(2);
    await t.http().get('/ontology').expect(200, { version: 2, ...ONTOLOGY });
    await t.http().get('/ontology/versions/1').expect(200, { version: 1, ...ONTOLOGY });
    const { rows } = await t.db.query('SELECT version FROM objects.ontology_version ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual([1, 2]);
  });

  it('takes an optional field sent as null (displayName, multi) as absent: stored and answered without it', async () => {
    const withNulls = {
      ...ONTOLOGY,
      objectTypes: [{ id: 'person', displayName: null, properties: [{ id: 'name', type: 'string', multi: null }, ONTOLOGY.objectTypes[0].properties[1]] }, ONTOLOGY.objectTypes[1]],
    };
    const expected = {
      objectTypes: [{ id: 'person', properties: [{ id: 'name', type: 'string' }, ONTOLOGY.objectTypes[0].properties[1]] }, ONTOLOGY.objectTypes[1]],
      linkTypes: ONTOLOGY.linkTypes,
    };
    const res = await t.http().put('/ontology').send(withNulls).expect(200);
    expect(res.body).toEqual({ version: res.body.version, ...expected });
    await t.http().get('/ontology').expect(200, { version: res.body.version, ...expected });
    // Later tests publish their own; put the test ontology back as the active one.
    await t.http().put('/ontology').send(ONTOLOGY).expect(200);
  });

  it('answers an unknown version with 404 OntologyVersionNotFound and a malformed one with 400', async () => {
    const res = await t.http().get('/ontology/versions/99').expect(404);
    expect(res.body).toMatchObject({ errorCode: 'NOT_FOUND', errorName: 'OntologyVersionNotFound', parameters: { version: 99 } });
    const bad = await t.http().get('/ontology/versions/abc').expect(400);
    expect(bad.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'version' } });
  });

  it.each([
    ['an unknown property type', { objectTypes: [{ id: 'a', properties: [{ id: 'x', type: 'uuid' }] }], linkTypes: [] }, 'objectTypes[0].properties[0].type'],
    ['duplicate object type ids', { objectTypes: [{ id: 'a', properties: [] }, { id: 'a', properties: [] }], linkTypes: [] }, 'objectTypes[1].id'],
    ['duplicate property ids', { objectTypes: [{ id: 'a', properties: [{ id: 'x', type: 'string' }, { id: 'x', type: 'long' }] }], linkTypes: [] }, 'objectTypes[0].properties[1].id'],
    ['duplicate link type ids', { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'l', sourceType: 'a', targetType: 'a' }, { id: 'l', sourceType: 'a', targetType: 'a' }] }, 'linkTypes[1].id'],
    ['a link type naming an unknown source type', { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'l', sourceType: 'b', targetType: 'a' }] }, 'linkTypes[0].sourceType'],
    ['a link type naming an unknown target type', { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'l', sourceType: 'a', targetType: 'zz' }] }, 'linkTypes[0].targetType'],
    ['an unknown field', { objectTypes: [{ id: 'a', properties: [], colour: 'red' }], linkTypes: [] }, 'objectTypes[0].colour'],
    ['a missing list', { objectTypes: [] }, 'linkTypes'],
    ['an invalid identifier', { objectTypes: [{ id: 'a/b', properties: [] }], linkTypes: [] }, 'objectTypes[0].id'],
    ['a list inside the object types', { objectTypes: [[{ id: 'a', properties: [] }]], linkTypes: [] }, 'objectTypes'],
    ['a list inside the properties', { objectTypes: [{ id: 'a', properties: [[{ id: 'x', type: 'string' }]] }], linkTypes: [] }, 'objectTypes[0].properties'],
    ['a link id that no object could use as a key of its links', { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'toString', sourceType: 'a', targetType: 'a' }] }, 'linkTypes[0].id'],
    ['a list inside the link types', { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [[{ id: 'l', sourceType: 'a', targetType: 'a' }]] }, 'linkTypes'],
  ])('rejects %s with 400 InvalidArgument naming the path, and publishes nothing', async (_name, body, path) => {
    const before = await t.http().get('/ontology').expect(200);
    const res = await t.http().put('/ontology').send(body).expect(400);
    expect(res.body).toMatchObject({ errorCode: 'INVALID_ARGUMENT', errorName: 'InvalidArgument', parameters: { path, reason: expect.any(String) } });
    const after = await t.http().get('/ontology').expect(200);
    expect(after.body.version).toBe(before.body.version);
  });

  it('rejects a body that is not JSON with 400 InvalidArgument', async () => {
    const res = await t.http().put('/ontology').set('Content-Type', 'application/json').send('{"objectTypes": [').expect(400);
    expect(res.body.errorName).toBe('InvalidArgument');
  });

  it('gives concurrent publishers distinct version numbers', async () => {
    const before = (await t.http().get('/ontology')).body.version;
    const results = await Promise.all(Array.from({ length: 6 }, () => t.http().put('/ontology').send(ONTOLOGY).expect(200)));
    const versions = results.map((r) => r.body.version).sort((a, b) => a - b);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6].map((n) => before + n));
  });
});
