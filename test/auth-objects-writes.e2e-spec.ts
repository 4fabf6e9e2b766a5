import { startObjectsApp, TestObjectsApp } from './support/apps';
import { bearer, JWT_ENV, token } from './support/tokens';

const ONTOLOGY = { objectTypes: [{ id: 'thing', properties: [{ id: 'name', type: 'string' }] }], linkTypes: [] };
const THING = { type: 'thing', properties: [{ id: 'name', value: 'x', origin: 'test' }] };

describe('AUTH_MODE=jwt on the ontology and object writes', () => {
  let t: TestObjectsApp;
  let prodOnly: string;
  let everything: string;
  beforeAll(async () => {
    t = await startObjectsApp(JWT_ENV);
    prodOnly = await token('ada', ['prod']);
    everything = await token('root', ['*'], { roles: ['ontology-admin'] });
    await t.http().put('/ontology').set(bearer(everything)).send(ONTOLOGY).expect(200);
  });
  afterAll(() => t?.close());

  const calls: [string, (h: Record<string, string>) => Promise<{ status: number; body: unknown; headers: Record<string, string> }>][] = [
    ['GET /ontology', (h) => t.http().get('/ontology').set(h)],
    ['GET /ontology/versions/1', (h) => t.http().get('/ontology/versions/1').set(h)],
    ['PUT /ontology', (h) => t.http().put('/ontology').set(h).send(ONTOLOGY)],
    ['PUT /objects/prod/a', (h) => t.http().put('/objects/prod/a').set(h).send(THING)],
    ['DELETE /objects/prod/a', (h) => t.http().delete('/objects/prod/a').set(h)],
    ['POST /objects/ingest', (h) => t.http().post('/objects/ingest').set(h).send({ objects: [{ environmentId: 'prod', id: 'b', ...THING }] })],
  ];

  describe.each(calls)('%s', (_name, call) => {
    it('is 401 Unauthorized with WWW-Authenticate: Bearer without a token', async () => {
      const res = await call({});
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toMatchObject({ errorCode: 'UNAUTHORIZED', errorName: 'Unauthorized' });
    });
    it('is 401 with a token signed by another key', async () => {
      const res = await call(bearer(await token('ada', ['*'], { secret: 'some-other-secret-some-other-secret-123' })));
      expect(res.status).toBe(401);
    });
    it('is 401 with an expired token', async () => {
      const res = await call(bearer(await token('ada', ['*'], { expiresIn: -120 })));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ errorName: 'Unauthorized', parameters: { reason: 'token has expired' } });
    });
  });

  it('lets a token for the environment write there', async () => {
    await t.http().put('/objects/prod/a').set(bearer(prodOnly)).send(THING).expect(201);
    await t.http().delete('/objects/prod/a').set(bearer(prodOnly)).expect(204);
  });

  it('answers writes to an environment the token does not grant with 403 PermissionDenied and stores nothing', async () => {
    const put = await t.http().put('/objects/staging/a').set(bearer(prodOnly)).send(THING).expect(403);
    expect(put.body).toMatchObject({ errorCode: 'PERMISSION_DENIED', errorName: 'PermissionDenied', parameters: { environmentId: 'staging' } });
    await t.http().put('/objects/staging/a').set(bearer(everything)).send(THING).expect(201);
    await t.http().delete('/objects/staging/a').set(bearer(prodOnly)).expect(403);
    const ingest = await t
      .http()
      .post('/objects/ingest')
      .set(bearer(prodOnly))
      .send({ objects: [{ environmentId: 'prod', id: 'ok', ...THING }, { environmentId: 'staging', id: 'no', ...THING }] })
      .expect(403);
    expect(ingest.body.errorName).toBe('PermissionDenied');
    const { rows } = await t.db.query(`SELECT environment_id, id FROM objects.object ORDER BY 1, 2`);
    expect(rows).toEqual([{ environment_id: 'staging', id: 'a' }]);
  });

  it('checks credentials before anything else: 401 comes before 404 and 400', async () => {
    await t.http().get('/ontology/versions/999').expect(401);
    await t.http().put('/ontology').send({ bogus: true }).expect(401);
  });

  it('needs no token for health', async () => {
    await t.http().get('/health/live').expect(200);
    await t.http().get('/health/ready').expect(200);
  });
});
