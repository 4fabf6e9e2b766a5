import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { OntologyService } from '../../../apps/objects/src/ontology/ontology.service';
import { buildObjectsApp, startObjectsApp, TestObjectsApp, withEnv } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { bearer, JWT_ENV, token } from '../../support/tokens';

/**
 * The ontology operations (docs/api.md §6): GET /ontology, GET /ontology/versions/{n} and PUT
 * /ontology; publishing needs a role under AUTH_MODE=jwt; versions published by another replica.
 */

// Not the shared test ontology: a small one with a displayName, so the round trip of every field shows.
const ONTOLOGY = {
  objectTypes: [
    {
      id: 'person',
      displayName: 'Person',
      properties: [
        { id: 'name', type: 'string' },
        { id: 'nick', type: 'string', multi: true },
      ],
    },
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
    await t
      .http()
      .get('/ontology')
      .expect(200, { version: 2, ...ONTOLOGY });
    await t
      .http()
      .get('/ontology/versions/1')
      .expect(200, { version: 1, ...ONTOLOGY });
    const { rows } = await t.db.query('SELECT version FROM objects.ontology_version ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual([1, 2]);
  });

  it('takes an optional field sent as null (displayName, multi) as absent: stored and answered without it', async () => {
    const withNulls = {
      ...ONTOLOGY,
      objectTypes: [
        {
          id: 'person',
          displayName: null,
          properties: [{ id: 'name', type: 'string', multi: null }, ONTOLOGY.objectTypes[0].properties[1]],
        },
        ONTOLOGY.objectTypes[1],
      ],
    };
    const expected = {
      objectTypes: [
        { id: 'person', properties: [{ id: 'name', type: 'string' }, ONTOLOGY.objectTypes[0].properties[1]] },
        ONTOLOGY.objectTypes[1],
      ],
      linkTypes: ONTOLOGY.linkTypes,
    };
    const res = await t.http().put('/ontology').send(withNulls).expect(200);
    expect(res.body).toEqual({ version: res.body.version, ...expected });
    await t
      .http()
      .get('/ontology')
      .expect(200, { version: res.body.version, ...expected });
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
    [
      'an unknown property type',
      { objectTypes: [{ id: 'a', properties: [{ id: 'x', type: 'uuid' }] }], linkTypes: [] },
      'objectTypes[0].properties[0].type',
    ],
    [
      'duplicate object type ids',
      {
        objectTypes: [
          { id: 'a', properties: [] },
          { id: 'a', properties: [] },
        ],
        linkTypes: [],
      },
      'objectTypes[1].id',
    ],
    [
      'duplicate property ids',
      {
        objectTypes: [
          {
            id: 'a',
            properties: [
              { id: 'x', type: 'string' },
              { id: 'x', type: 'long' },
            ],
          },
        ],
        linkTypes: [],
      },
      'objectTypes[0].properties[1].id',
    ],
    [
      'duplicate link type ids',
      {
        objectTypes: [{ id: 'a', properties: [] }],
        linkTypes: [
          { id: 'l', sourceType: 'a', targetType: 'a' },
          { id: 'l', sourceType: 'a', targetType: 'a' },
        ],
      },
      'linkTypes[1].id',
    ],
    [
      'a link type naming an unknown source type',
      { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'l', sourceType: 'b', targetType: 'a' }] },
      'linkTypes[0].sourceType',
    ],
    [
      'a link type naming an unknown target type',
      { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'l', sourceType: 'a', targetType: 'zz' }] },
      'linkTypes[0].targetType',
    ],
    ['an unknown field', { objectTypes: [{ id: 'a', properties: [], colour: 'red' }], linkTypes: [] }, 'objectTypes[0].colour'],
    ['a missing list', { objectTypes: [] }, 'linkTypes'],
    ['an invalid identifier', { objectTypes: [{ id: 'a/b', properties: [] }], linkTypes: [] }, 'objectTypes[0].id'],
    ['a list inside the object types', { objectTypes: [[{ id: 'a', properties: [] }]], linkTypes: [] }, 'objectTypes'],
    [
      'a list inside the properties',
      { objectTypes: [{ id: 'a', properties: [[{ id: 'x', type: 'string' }]] }], linkTypes: [] },
      'objectTypes[0].properties',
    ],
    [
      'a link id that no object could use as a key of its links',
      { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [{ id: 'toString', sourceType: 'a', targetType: 'a' }] },
      'linkTypes[0].id',
    ],
    [
      'a list inside the link types',
      { objectTypes: [{ id: 'a', properties: [] }], linkTypes: [[{ id: 'l', sourceType: 'a', targetType: 'a' }]] },
      'linkTypes',
    ],
  ])('rejects %s with 400 InvalidArgument naming the path, and publishes nothing', async (_name, body, path) => {
    const before = await t.http().get('/ontology').expect(200);
    const res = await t.http().put('/ontology').send(body).expect(400);
    expect(res.body).toMatchObject({
      errorCode: 'INVALID_ARGUMENT',
      errorName: 'InvalidArgument',
      parameters: { path, reason: expect.any(String) },
    });
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

/**
 * Publishing the ontology (README Security, Roles): with AUTH_MODE=jwt it needs a role; an ontology is bounded
 * in size; parsed versions are cached within a bound. Also the optional iss / aud checks.
 */
describe('publishing the ontology needs a role', () => {
  let t: TestObjectsApp;
  const versions = async () => (await t.db.query(`SELECT count(*)::int AS n FROM objects.ontology_version`)).rows[0].n as number;

  beforeAll(async () => {
    t = await startObjectsApp(JWT_ENV);
  });
  afterAll(() => t.close());

  it('a token without the role, or with environments: [], is 403 PermissionDenied and publishes nothing; the role publishes', async () => {
    for (const tok of [
      await token('ada', ['*']),
      await token('ada', []),
      await token('ada', ['*'], { roles: ['reader', 'ontology-admins'] }),
    ]) {
      const res = await t.http().put('/ontology').set(bearer(tok)).send({ objectTypes: [], linkTypes: [] });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({
        errorCode: 'PERMISSION_DENIED',
        errorName: 'PermissionDenied',
        parameters: { role: 'ontology-admin' },
      });
    }
    expect(await versions()).toBe(0);
    const admin = await token('ada', [], { roles: ['ontology-admin'] });
    await t.http().put('/ontology').set(bearer(admin)).send(WRITE_ONTOLOGY).expect(200);
    expect(await versions()).toBe(1);
  });

  it('a roles claim that is not a list of names is 401', async () => {
    const res = await t
      .http()
      .get('/ontology')
      .set(bearer(await token('ada', ['*'], { claims: { roles: 'ontology-admin' } })));
    expect(res.status).toBe(401);
  });

  it('the role check comes before the body is validated; an ontology is bounded to 100,000 properties', async () => {
    const bogus = await t
      .http()
      .put('/ontology')
      .set(bearer(await token('ada', ['*'])))
      .send({ bogus: true });
    expect(bogus.status).toBe(403);
    const admin = await token('ada', ['*'], { roles: ['ontology-admin'] });
    const properties = Array.from({ length: 1000 }, (_, i) => ({ id: `p${i}`, type: 'string' }));
    const huge = { objectTypes: Array.from({ length: 101 }, (_, i) => ({ id: `t${i}`, properties })), linkTypes: [] };
    const res = await t.http().put('/ontology').set(bearer(admin)).send(huge);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      errorName: 'InvalidArgument',
      parameters: { path: 'objectTypes', reason: expect.stringMatching(/at most 100000 properties.*not 101000/) },
    });
  });

  it('keeps at most 8 parsed ontology versions per replica', async () => {
    const admin = await token('ada', ['*'], { roles: ['ontology-admin'] });
    for (let i = 0; i < 12; i++) await t.http().put('/ontology').set(bearer(admin)).send(WRITE_ONTOLOGY).expect(200);
    for (let v = 1; v <= 13; v++) await t.http().get(`/ontology/versions/${v}`).set(bearer(admin)).expect(200);
    expect(t.app.get(OntologyService).cachedVersions()).toBe(8);
    expect((await t.http().get('/ontology').set(bearer(admin)).expect(200)).body.version).toBe(13);
  });
});

describe('AUTH_ROLES_CLAIM, AUTH_ONTOLOGY_ADMIN_ROLE, AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp({
      ...JWT_ENV,
      AUTH_ROLES_CLAIM: 'realm_access.roles',
      AUTH_ONTOLOGY_ADMIN_ROLE: 'schema-owner',
      AUTH_JWT_ISSUER: 'https://id.example.com',
      AUTH_JWT_AUDIENCE: 'ontology',
    });
  });
  afterAll(() => t.close());

  const claims = (extra: Record<string, unknown>) => ({ iss: 'https://id.example.com', aud: 'ontology', ...extra });

  it('checks iss and aud when configured', async () => {
    expect(
      (
        await t
          .http()
          .get('/ontology')
          .set(bearer(await token('ada', ['*'], { claims: claims({}) })))
      ).status,
    ).toBe(200);
    expect(
      (
        await t
          .http()
          .get('/ontology')
          .set(bearer(await token('ada', ['*'], { claims: claims({ aud: ['other', 'ontology'] }) })))
      ).status,
    ).toBe(200);
    for (const bad of [{ iss: 'https://evil.example.com' }, { aud: 'other' }, { iss: undefined }, { aud: undefined }]) {
      const res = await t
        .http()
        .get('/ontology')
        .set(bearer(await token('ada', ['*'], { claims: claims(bad) })));
      expect({ bad, status: res.status }).toEqual({ bad, status: 401 });
      expect(res.body.errorName).toBe('Unauthorized');
    }
  });

  it('reads the roles from the configured claim path and asks for the configured role', async () => {
    const put = async (extra: Record<string, unknown>) =>
      (
        await t
          .http()
          .put('/ontology')
          .set(bearer(await token('ada', ['*'], { claims: claims(extra) })))
          .send(WRITE_ONTOLOGY)
      ).status;
    expect(await put({ roles: ['schema-owner'] })).toBe(403);
    expect(await put({ realm_access: { roles: ['ontology-admin'] } })).toBe(403);
    expect(await put({ realm_access: { roles: ['schema-owner'] } })).toBe(200);
  });
});

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
  const publish = (objectTypes: object[]) =>
    writer.http().put('/ontology').query({ force: true }).send({ objectTypes, linkTypes: [] }).expect(200);
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
    await writer
      .http()
      .put('/objects/prod/port-7')
      .send({ type: 'port', properties: [{ id: 'name', value: 'Plymouth', origin: 'registry' }] })
      .expect(201);
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
    await publish([
      { id: 'ship', properties: [{ id: 'legacyCode', type: 'string' }] },
      { id: 'port', properties: [] },
    ]);
    const res = await members({ type: 'propertyEquals', propertyEquals: { propertyId: 'name', value: 'Endeavour' } });
    expect(res.status).toBe(400);
    expect(res.body.errorName).toBe('InvalidFilter');
  });

  it('a search with no hits is checked too: a type removed since is InvalidFilter', async () => {
    await publish([{ id: 'ship', properties: [{ id: 'legacyCode', type: 'string' }] }]);
    const filter = {
      type: 'and',
      and: {
        filters: [
          { type: 'objectType', objectType: { types: ['port'] } },
          { type: 'objectId', objectId: { ids: ['no-such-port'] } },
        ],
      },
    };
    const res = await search(filter);
    expect(res.status).toBe(400);
    expect(res.body.errorName).toBe('InvalidFilter');
    // The reader now holds the newest version: a filter it allows is answered from it.
    expect(ids(await search({ type: 'propertyEquals', propertyEquals: { propertyId: 'legacyCode', value: 'X1' } }).expect(200))).toEqual([
      'ship-1',
    ]);
  });
});
