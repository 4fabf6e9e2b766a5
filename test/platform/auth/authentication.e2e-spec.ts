import request from 'supertest';
import { startBothApps, startObjectsApp, TestBothApps, TestObjectsApp } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';
import { exchange, parseResponses } from '../../support/raw-http';
import { bearer, JWT_ENV, token } from '../../support/tokens';

/**
 * Authentication (AUTH_MODE=jwt, README "Authentication" and "Security"): 401 without valid
 * credentials on the ontology and object writes, before the body is read; the bounds on bodies;
 * AUTH_JWT_MAX_TTL; and what needs no credentials. Visibility per environment is
 * auth-visibility.e2e-spec.ts.
 */
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
    [
      'POST /objects/ingest',
      (h) =>
        t
          .http()
          .post('/objects/ingest')
          .set(h)
          .send({ objects: [{ environmentId: 'prod', id: 'b', ...THING }] }),
    ],
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
    expect(put.body).toMatchObject({
      errorCode: 'PERMISSION_DENIED',
      errorName: 'PermissionDenied',
      parameters: { environmentId: 'staging' },
    });
    await t.http().put('/objects/staging/a').set(bearer(everything)).send(THING).expect(201);
    await t.http().delete('/objects/staging/a').set(bearer(prodOnly)).expect(403);
    const ingest = await t
      .http()
      .post('/objects/ingest')
      .set(bearer(prodOnly))
      .send({
        objects: [
          { environmentId: 'prod', id: 'ok', ...THING },
          { environmentId: 'staging', id: 'no', ...THING },
        ],
      })
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

/**
 * Credentials before the body (README Security, Roles): in AUTH_MODE=jwt a request without valid credentials
 * is 401 before its body is read or parsed; bodies are bounded by BODY_LIMIT (1mb by default),
 * and by LARGE_BODY_LIMIT (64mb) only for the operations that carry many objects or an ontology.
 */
describe('authentication before the body, and body limits', () => {
  let t: TestBothApps;
  let admin: string;
  const portOf = (url: string) => Number(new URL(url).port);

  beforeAll(async () => {
    t = await startBothApps({ ...JWT_ENV, LARGE_BODY_LIMIT: '3mb' });
    admin = await token('ada', ['*'], { roles: ['ontology-admin'] });
    await t.objectsHttp().put('/ontology').set(bearer(admin)).send(WRITE_ONTOLOGY).expect(200);
  });
  afterAll(() => t.close());

  it.each([
    ['objects', 'POST /objects/search', () => t.objectsUrl],
    ['objects', 'PUT /ontology', () => t.objectsUrl],
    ['object-sets', 'POST /object-sets', () => t.objectSetsUrl],
  ])(
    '%s: %s announcing a 60 MB body without a token is 401 at once, without waiting for the body, and the connection closes',
    async (_app, route, url) => {
      const [method, path] = route.split(' ');
      const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000000\r\n\r\n{"filter":`;
      const started = Date.now();
      const [res] = parseResponses(await exchange(portOf(url()), [head], { timeoutMs: 5_000 }), [method]);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(res.status).toBe(401);
      expect(res.headers['connection']).toBe('close');
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(JSON.parse(res.body)).toMatchObject({ errorCode: 'UNAUTHORIZED', errorName: 'Unauthorized' });
    },
  );

  it('a body that is not JSON, or over the limit, is 401 without valid credentials (not 400 or 413)', async () => {
    const notJson = await t.objectsHttp().post('/objects/search').set('content-type', 'application/json').send('{"filter": nope');
    expect(notJson.status).toBe(401);
    const forged = await t
      .objectsHttp()
      .post('/objects/search')
      .set('authorization', 'Bearer a.b.c')
      .set('content-type', 'application/json')
      .send('x'.repeat(2_000_000));
    expect(forged.status).toBe(401);
    // With a token, the same bodies meet the body rules.
    const withToken = await t
      .objectsHttp()
      .post('/objects/search')
      .set(bearer(admin))
      .set('content-type', 'application/json')
      .send('{"filter": nope');
    expect(withToken.status).toBe(400);
  });

  it('BODY_LIMIT defaults to 1mb; ingest, an ontology, one object, bulk and set definitions take LARGE_BODY_LIMIT', async () => {
    const padding = 'x'.repeat(1_100_000);
    const search = await t
      .objectsHttp()
      .post('/objects/search')
      .set(bearer(admin))
      .send({ filter: { type: 'all', all: {} }, padding });
    expect(search.status).toBe(413);
    expect(search.body).toMatchObject({ errorName: 'PayloadTooLarge', parameters: { limit: String(1024 * 1024) } });
    const setSearch = await t
      .setsHttp()
      .post('/object-sets/search')
      .set(bearer(admin))
      .send({ filter: { type: 'userId', userId: { userId: 'ada' } }, padding });
    expect(setSearch.status).toBe(413);

    // Under 3mb on the large routes: the body is read, and refused for its unknown field, not its size.
    for (const [http, method, path] of [
      [t.objectsHttp, 'post', '/objects/ingest'],
      [t.objectsHttp, 'post', '/objects/bulk'],
      [t.objectsHttp, 'put', '/objects/prod/p-1'],
      [t.objectsHttp, 'put', '/ontology'],
      [t.setsHttp, 'post', '/object-sets'],
      [t.setsHttp, 'put', '/object-sets/ri.object-set.main.object-set.00000000-0000-4000-8000-000000000001'],
    ] as const) {
      const res = await http()[method](path).set(bearer(admin)).send({ padding });
      expect({ path, status: res.status }).toEqual({ path, status: res.status === 404 ? 404 : 400 });
      const over = await http()
        [method](path)
        .set(bearer(admin))
        .send({ padding: 'x'.repeat(3_200_000) });
      expect({ path, status: over.status, limit: over.body.parameters?.limit }).toEqual({
        path,
        status: 413,
        limit: String(3 * 1024 * 1024),
      });
    }
  });
});

/** AUTH_JWT_MAX_TTL (README "Authentication"): a token valid for longer than it allows is 401, whatever its signature. */
describe('AUTH_JWT_MAX_TTL', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp({ ...JWT_ENV, AUTH_JWT_MAX_TTL: '3600' });
  });
  afterAll(() => t?.close());

  it('refuses a token that expires in 1e20 seconds, or in two hours; takes one of an hour', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const expiresIn of [1e20 - now, 7200]) {
      const res = await t
        .http()
        .get('/ontology')
        .set(bearer(await token('ada', ['*'], { expiresIn })));
      expect([res.status, res.body.errorName, res.body.parameters?.reason]).toEqual([
        401,
        'Unauthorized',
        'token is valid for longer than AUTH_JWT_MAX_TTL allows (3600 s)',
      ]);
    }
    await t
      .http()
      .get('/ontology')
      .set(bearer(await token('ada', ['*'], { expiresIn: 3600 })))
      .expect(200);
  });
});

/**
 * AUTH_MODE=jwt: only reading the health checks, /metrics and the Swagger documents under /docs/
 * needs no credentials (GET or HEAD, without a body). Any other method or path, `/docsx` among
 * them, is 401 before its body is read or parsed (README "Security").
 */
describe('what needs no credentials (AUTH_MODE=jwt)', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp(JWT_ENV);
  });
  afterAll(() => t?.close());

  const http = () => request(t.app.getHttpServer());

  it('answers GET and HEAD of the health checks, /metrics and the Swagger documents without a token', async () => {
    for (const path of ['/health/live', '/health/ready', '/metrics', '/docs/objects', '/docs/objects-json']) {
      expect([path, (await http().get(path)).status]).toEqual([path, 200]);
      expect([path, (await http().head(path)).status]).toEqual([path, 200]);
    }
  });

  it('refuses everything else without a token, before reading the body (not 400 for a body that is not JSON, nor 404)', async () => {
    const notJson = '{"not json';
    for (const [method, path] of [
      ['post', '/docsx'],
      ['post', '/docs/objects'],
      ['put', '/docs/objects-json'],
      ['post', '/health/live'],
      ['post', '/metrics'],
      ['get', '/docsx'],
      ['get', '/healthz'],
      ['get', '/health/livex'],
      // a read that carries a body is not a plain read
      ['get', '/docs/objects'],
    ] as const) {
      const res = await http()[method](path).set('content-type', 'application/json').send(notJson);
      expect([method, path, res.status, res.body.errorName, res.headers['www-authenticate']]).toEqual([
        method,
        path,
        401,
        'Unauthorized',
        'Bearer',
      ]);
    }
  });
});
