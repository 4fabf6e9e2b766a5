import { startObjectsApp, TestObjectsApp } from './support/apps';
import { bearer, JWT_ENV, token } from './support/tokens';

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
      const res = await t.http().get('/ontology').set(bearer(await token('ada', ['*'], { expiresIn })));
      expect([res.status, res.body.errorName, res.body.parameters?.reason]).toEqual([401, 'Unauthorized', 'token is valid for longer than AUTH_JWT_MAX_TTL allows (3600 s)']);
    }
    await t.http().get('/ontology').set(bearer(await token('ada', ['*'], { expiresIn: 3600 }))).expect(200);
  });
});
