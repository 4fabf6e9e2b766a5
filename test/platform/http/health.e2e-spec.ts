import { startObjectsApp, TestObjectsApp } from '../../support/apps';

describe('objects app: health and the error pipeline', () => {
  let t: TestObjectsApp;
  beforeAll(async () => {
    t = await startObjectsApp();
  });
  afterAll(() => t?.close());

  it('answers liveness and readiness without credentials', async () => {
    await t.http().get('/health/live').expect(200, { status: 'ok' });
    const ready = await t.http().get('/health/ready').expect(200);
    expect(ready.body.status).toBe('ok');
  });

  it('answers an unknown route with the Conjure error body', async () => {
    const res = await t.http().get('/nope').expect(404);
    expect(res.body).toEqual({
      errorCode: 'NOT_FOUND',
      errorName: 'NotFound',
      errorInstanceId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      parameters: { method: 'GET', path: '/nope' },
    });
  });

  it('ran its migrations into schema objects', async () => {
    const { rows } = await t.db.query(`SELECT name FROM objects.migrations ORDER BY id`);
    expect(rows.map((r) => r.name)).toContain('InitialSchema1764000000000');
  });
});
