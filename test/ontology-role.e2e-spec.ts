import { OntologyService } from '../apps/objects/src/ontology/ontology.service';
import { startObjectsApp, TestObjectsApp } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';
import { bearer, JWT_ENV, token } from './support/tokens';

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
    for (const tok of [await token('ada', ['*']), await token('ada', []), await token('ada', ['*'], { roles: ['reader', 'ontology-admins'] })]) {
      const res = await t.http().put('/ontology').set(bearer(tok)).send({ objectTypes: [], linkTypes: [] });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ errorCode: 'PERMISSION_DENIED', errorName: 'PermissionDenied', parameters: { role: 'ontology-admin' } });
    }
    expect(await versions()).toBe(0);
    const admin = await token('ada', [], { roles: ['ontology-admin'] });
    await t.http().put('/ontology').set(bearer(admin)).send(WRITE_ONTOLOGY).expect(200);
    expect(await versions()).toBe(1);
  });

  it('a roles claim that is not a list of names is 401', async () => {
    const res = await t.http().get('/ontology').set(bearer(await token('ada', ['*'], { claims: { roles: 'ontology-admin' } })));
    expect(res.status).toBe(401);
  });

  it('the role check comes before the body is validated; an ontology is bounded to 100,000 properties', async () => {
    const bogus = await t.http().put('/ontology').set(bearer(await token('ada', ['*']))).send({ bogus: true });
    expect(bogus.status).toBe(403);
    const admin = await token('ada', ['*'], { roles: ['ontology-admin'] });
    const properties = Array.from({ length: 1000 }, (_, i) => ({ id: `p${i}`, type: 'string' }));
    const huge = { objectTypes: Array.from({ length: 101 }, (_, i) => ({ id: `t${i}`, properties })), linkTypes: [] };
    const res = await t.http().put('/ontology').set(bearer(admin)).send(huge);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ errorName: 'InvalidArgument', parameters: { path: 'objectTypes', reason: expect.stringMatching(/at most 100000 properties.*not 101000/) } });
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
    expect((await t.http().get('/ontology').set(bearer(await token('ada', ['*'], { claims: claims({}) })))).status).toBe(200);
    expect((await t.http().get('/ontology').set(bearer(await token('ada', ['*'], { claims: claims({ aud: ['other', 'ontology'] }) })))).status).toBe(200);
    for (const bad of [{ iss: 'https://evil.example.com' }, { aud: 'other' }, { iss: undefined }, { aud: undefined }]) {
      const res = await t.http().get('/ontology').set(bearer(await token('ada', ['*'], { claims: claims(bad) })));
      expect({ bad, status: res.status }).toEqual({ bad, status: 401 });
      expect(res.body.errorName).toBe('Unauthorized');
    }
  });

  it('reads the roles from the configured claim path and asks for the configured role', async () => {
    const put = async (extra: Record<string, unknown>) =>
      (await t.http().put('/ontology').set(bearer(await token('ada', ['*'], { claims: claims(extra) }))).send(WRITE_ONTOLOGY)).status;
    expect(await put({ roles: ['schema-owner'] })).toBe(403);
    expect(await put({ realm_access: { roles: ['ontology-admin'] } })).toBe(403);
    expect(await put({ realm_access: { roles: ['schema-owner'] } })).toBe(200);
  });
});
