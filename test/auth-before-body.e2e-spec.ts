import { exchange, parseResponses } from './support/raw-http';
import { startBothApps, TestBothApps } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';
import { bearer, JWT_ENV, token } from './support/tokens';

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
  ])('%s: %s announcing a 60 MB body without a token is 401 at once, without waiting for the body, and the connection closes', async (_app, route, url) => {
    const [method, path] = route.split(' ');
    const head = `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000000\r\n\r\n{"filter":`;
    const started = Date.now();
    const [res] = parseResponses(await exchange(portOf(url()), [head], { timeoutMs: 5_000 }), [method]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(res.status).toBe(401);
    expect(res.headers['connection']).toBe('close');
    expect(res.headers['www-authenticate']).toBe('Bearer');
    expect(JSON.parse(res.body)).toMatchObject({ errorCode: 'UNAUTHORIZED', errorName: 'Unauthorized' });
  });

  it('a body that is not JSON, or over the limit, is 401 without valid credentials (not 400 or 413)', async () => {
    const notJson = await t.objectsHttp().post('/objects/search').set('content-type', 'application/json').send('{"filter": nope');
    expect(notJson.status).toBe(401);
    const forged = await t.objectsHttp().post('/objects/search').set('authorization', 'Bearer a.b.c').set('content-type', 'application/json').send('x'.repeat(2_000_000));
    expect(forged.status).toBe(401);
    // With a token, the same bodies meet the body rules.
    const withToken = await t.objectsHttp().post('/objects/search').set(bearer(admin)).set('content-type', 'application/json').send('{"filter": nope');
    expect(withToken.status).toBe(400);
  });

  it('BODY_LIMIT defaults to 1mb; ingest, an ontology, one object, bulk and set definitions take LARGE_BODY_LIMIT', async () => {
    const padding = 'x'.repeat(1_100_000);
    const search = await t.objectsHttp().post('/objects/search').set(bearer(admin)).send({ filter: { type: 'all', all: {} }, padding });
    expect(search.status).toBe(413);
    expect(search.body).toMatchObject({ errorName: 'PayloadTooLarge', parameters: { limit: String(1024 * 1024) } });
    const setSearch = await t.setsHttp().post('/object-sets/search').set(bearer(admin)).send({ filter: { type: 'userId', userId: { userId: 'ada' } }, padding });
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
      const over = await http()[method](path).set(bearer(admin)).send({ padding: 'x'.repeat(3_200_000) });
      expect({ path, status: over.status, limit: over.body.parameters?.limit }).toEqual({ path, status: 413, limit: String(3 * 1024 * 1024) });
    }
  });
});
