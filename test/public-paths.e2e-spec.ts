import request from 'supertest';
import { startObjectsApp, TestObjectsApp } from './support/apps';
import { JWT_ENV } from './support/tokens';

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
      expect([method, path, res.status, res.body.errorName, res.headers['www-authenticate']]).toEqual([method, path, 401, 'Unauthorized', 'Bearer']);
    }
  });
});
