import { startBothApps, TestBothApps } from '../../support/apps';
import { bearer, JWT_ENV, token } from '../../support/tokens';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * AUTH_MODE=jwt across both apps: every endpoint rejects missing, badly signed and expired
 * tokens (401 before anything else), hides other environments (404 / omitted / 403), and a
 * leak test checks that nothing of a hidden environment appears in any read response.
 */
const SECRET = 'beta-secret';

function person(env: string, id: string, tags: string[], links: Record<string, string[]> = {}, name = `Person ${id}`) {
  return { environmentId: env, id, type: 'person', properties: [{ id: 'name', value: name, origin: 'crm' }], tags, links };
}
function company(env: string, id: string) {
  return { environmentId: env, id, type: 'company', properties: [{ id: 'name', value: `Company ${id}`, origin: 'crm' }] };
}

type Res = { status: number; body: unknown; headers: Record<string, string>; text: string };

describe('authentication and per-environment visibility (both apps, AUTH_MODE=jwt)', () => {
  let t: TestBothApps;
  let root: string;
  let alpha: string;
  let beta: string;
  const sets: Record<string, string> = {};

  beforeAll(async () => {
    t = await startBothApps(JWT_ENV);
    root = await token('root', ['*'], { roles: ['ontology-admin'] });
    alpha = await token('ada', ['alpha']);
    beta = await token('bob', ['beta']);
    await t.objectsHttp().put('/ontology').set(bearer(root)).send(WRITE_ONTOLOGY).expect(200);
    await t
      .objectsHttp()
      .post('/objects/ingest')
      .set(bearer(root))
      .send({
        objects: [
          person('alpha', 'a-1', ['vip'], { worksFor: ['c-1'], knows: ['shared'] }),
          person('alpha', 'shared', ['vip'], { knows: ['a-1'] }),
          company('alpha', 'c-1'),
          person('beta', `${SECRET}-1`, ['vip'], { worksFor: [`${SECRET}-co`], knows: ['shared'] }, `Name ${SECRET}`),
          person('beta', 'shared', ['vip'], { knows: [`${SECRET}-1`] }, `Name ${SECRET} shared`),
          company('beta', `${SECRET}-co`),
        ],
      })
      .expect(200);
    // Sets by bob (beta) and ada (alpha), every kind.
    const make = async (tok: string, title: string, definition: unknown) =>
      (await t.setsHttp().post('/object-sets').set(bearer(tok)).send({ title, definition }).expect(201)).body.id as string;
    sets.vip = await make(beta, 'vip everywhere', { type: 'filter', filter: { filter: { type: 'tag', tag: { tags: ['vip'] } } } });
    sets.stable = await make(beta, 'bob list', {
      type: 'stable',
      stable: {
        objects: [
          { environmentId: 'beta', id: `${SECRET}-1` },
          { environmentId: 'alpha', id: 'a-1' },
        ],
      },
    });
    sets.employers = await make(beta, 'employers', {
      type: 'linkOperation',
      linkOperation: { operator: 'EXTRACT_TARGET', linkId: 'worksFor', objectSetId: sets.vip },
    });
    sets.union = await make(alpha, 'union', {
      type: 'operation',
      operation: { operator: 'UNION', objectSetIds: [sets.stable, sets.employers] },
    });
  });
  afterAll(() => t?.close());

  const W = { startTime: '2000-01-01T00:00:00Z', endTime: '2100-01-01T00:00:00Z' };
  const endpoints: [string, (h: Record<string, string>) => Promise<Res>][] = [
    ['GET /objects/{id}', (h) => t.objectsHttp().get('/objects/a-1').set(h)],
    [
      'POST /objects/bulk',
      (h) =>
        t
          .objectsHttp()
          .post('/objects/bulk')
          .set(h)
          .send({ objectIds: ['a-1'] }),
    ],
    [
      'POST /objects/search',
      (h) =>
        t
          .objectsHttp()
          .post('/objects/search')
          .set(h)
          .send({ filter: { type: 'all', all: {} } }),
    ],
    ['GET /objects/{env}/{id}/history', (h) => t.objectsHttp().get('/objects/alpha/a-1/history').query(W).set(h)],
    ['GET /objects/versioned/{env}/{id}', (h) => t.objectsHttp().get('/objects/versioned/alpha/a-1?version=1').set(h)],
    ['PUT /objects/{env}/{id}', (h) => t.objectsHttp().put('/objects/alpha/new-1').set(h).send({ type: 'company', properties: [] })],
    ['DELETE /objects/{env}/{id}', (h) => t.objectsHttp().delete('/objects/alpha/nothing-here').set(h)],
    [
      'POST /objects/ingest',
      (h) =>
        t
          .objectsHttp()
          .post('/objects/ingest')
          .set(h)
          .send({ objects: [company('alpha', 'c-9')] }),
    ],
    [
      'POST /objects/internal/members',
      (h) =>
        t
          .objectsHttp()
          .post('/objects/internal/members')
          .set(h)
          .send({ filter: { type: 'all', all: {} }, limit: 10 }),
    ],
    [
      'POST /objects/internal/validate-filter',
      (h) =>
        t
          .objectsHttp()
          .post('/objects/internal/validate-filter')
          .set(h)
          .send({ filter: { type: 'all', all: {} } }),
    ],
    [
      'POST /objects/internal/validate-set-filter',
      (h) =>
        t
          .objectsHttp()
          .post('/objects/internal/validate-set-filter')
          .set(h)
          .send({ filter: { type: 'all', all: {} } }),
    ],
    [
      'POST /object-sets',
      (h) =>
        t
          .setsHttp()
          .post('/object-sets')
          .set(h)
          .send({ title: 'x', definition: { type: 'empty', empty: {} } }),
    ],
    ['PUT /object-sets/{id}', (h) => t.setsHttp().put(`/object-sets/${sets.union}`).set(h).send({ title: 'renamed' })],
    ['DELETE /object-sets/{id}', (h) => t.setsHttp().delete(`/object-sets/${sets.union}x`).set(h)],
    ['GET /object-sets/{id}/metadata', (h) => t.setsHttp().get(`/object-sets/${sets.vip}/metadata`).set(h)],
    ['GET /object-sets/{id}/members', (h) => t.setsHttp().get(`/object-sets/${sets.vip}/members`).set(h)],
    ['GET /object-sets/internal/{id}/filter', (h) => t.setsHttp().get(`/object-sets/internal/${sets.vip}/filter`).set(h)],
  ];

  describe.each(endpoints)('%s', (_name, call) => {
    it('no token: 401 Unauthorized with WWW-Authenticate: Bearer', async () => {
      const res = await call({});
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toMatchObject({ errorCode: 'UNAUTHORIZED', errorName: 'Unauthorized', errorInstanceId: expect.any(String) });
    });
    it('bad signature: 401', async () => {
      const res = await call(bearer(await token('ada', ['*'], { secret: 'another-secret-another-secret-0123456' })));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ errorName: 'Unauthorized' });
    });
    it('expired: 401', async () => {
      const res = await call(bearer(await token('ada', ['*'], { expiresIn: -120 })));
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ errorName: 'Unauthorized' });
    });
    it('malformed header: 401', async () => {
      expect((await call({ Authorization: 'Bearer not.a.jwt' })).status).toBe(401);
      expect((await call({ Authorization: 'Basic abc' })).status).toBe(401);
    });
  });

  describe('a token for another environment', () => {
    it('reads: 404 on single-object reads, omitted from lists', async () => {
      expect((await t.objectsHttp().get('/objects/a-1').set(bearer(beta)).expect(404)).body).toMatchObject({ errorName: 'ObjectNotFound' });
      expect((await t.objectsHttp().get('/objects/a-1?environmentId=alpha').set(bearer(beta)).expect(404)).body).toMatchObject({
        errorName: 'ObjectNotFound',
      });
      await t.objectsHttp().get('/objects/alpha/a-1/history').query(W).set(bearer(beta)).expect(404);
      await t.objectsHttp().get('/objects/versioned/alpha/a-1?version=1').set(bearer(beta)).expect(404);
      expect(
        (
          await t
            .objectsHttp()
            .post('/objects/bulk')
            .set(bearer(beta))
            .send({ objectIds: ['a-1', 'c-1'] })
            .expect(200)
        ).body,
      ).toEqual({ objects: [] });
      const search = await t
        .objectsHttp()
        .post('/objects/search')
        .set(bearer(beta))
        .send({ filter: { type: 'objectId', objectId: { ids: ['a-1', 'c-1'] } } })
        .expect(200);
      expect(search.body).toEqual({ objects: [] });
    });

    it('an id in a visible and a hidden environment is not ambiguous: the visible one is returned', async () => {
      const res = await t.objectsHttp().get('/objects/shared').set(bearer(alpha)).expect(200);
      expect(res.body.environmentId).toBe('alpha');
      await t.objectsHttp().get('/objects/shared').set(bearer(root)).expect(409);
    });

    it('writes: 403 PermissionDenied, and nothing is stored', async () => {
      const put = await t.objectsHttp().put('/objects/alpha/x-1').set(bearer(beta)).send({ type: 'company', properties: [] }).expect(403);
      expect(put.body).toMatchObject({ errorCode: 'PERMISSION_DENIED', errorName: 'PermissionDenied' });
      await t.objectsHttp().delete('/objects/alpha/a-1').set(bearer(beta)).expect(403);
      await t
        .objectsHttp()
        .post('/objects/ingest')
        .set(bearer(beta))
        .send({ objects: [company('beta', 'ok-1'), company('alpha', 'x-2')] })
        .expect(403);
      const stored = await t.db.query(`SELECT id FROM objects.object WHERE id IN ('x-1', 'x-2', 'ok-1')`);
      expect(stored.rows).toEqual([]);
      await t.objectsHttp().get('/objects/a-1').set(bearer(alpha)).expect(200);
    });

    it('set members are filtered to the caller, also through links and referenced sets', async () => {
      const m = async (tok: string, id: string, consistency = 'STRONG') =>
        (await t.setsHttp().get(`/object-sets/${id}/members?consistency=${consistency}`).set(bearer(tok)).expect(200)).body;
      expect(await m(alpha, sets.vip)).toEqual({
        members: { alpha: ['a-1', 'shared'] },
        links: [
          { linkId: 'knows', sourceObjectId: 'a-1', targetObjectId: 'shared', environmentId: 'alpha' },
          { linkId: 'knows', sourceObjectId: 'shared', targetObjectId: 'a-1', environmentId: 'alpha' },
        ],
      });
      expect((await m(beta, sets.vip)).members).toEqual({ beta: [`${SECRET}-1`, 'shared'] });
      expect((await m(alpha, sets.employers)).members).toEqual({ alpha: ['c-1'] });
      expect((await m(alpha, sets.union)).members).toEqual({ alpha: ['a-1', 'c-1'] });
      // The EVENTUALLY cache never hands one caller's view to another.
      expect((await m(beta, sets.vip, 'EVENTUALLY')).members).toEqual({ beta: [`${SECRET}-1`, 'shared'] });
      expect((await m(alpha, sets.vip, 'EVENTUALLY')).members).toEqual({ alpha: ['a-1', 'shared'] });
      expect((await m(root, sets.vip, 'EVENTUALLY')).members).toEqual({ alpha: ['a-1', 'shared'], beta: [`${SECRET}-1`, 'shared'] });
    });

    it('only the creator may change or delete a set (403)', async () => {
      const put = await t.setsHttp().put(`/object-sets/${sets.vip}`).set(bearer(alpha)).send({ title: 'mine now' }).expect(403);
      expect(put.body).toMatchObject({ errorName: 'PermissionDenied' });
      await t.setsHttp().delete(`/object-sets/${sets.vip}`).set(bearer(alpha)).expect(403);
      await t.setsHttp().put(`/object-sets/${sets.union}`).set(bearer(alpha)).send({ title: 'union (renamed)' }).expect(200);
    });

    it('Swagger documents the bearer scheme on every operation (the Authorize button), without a token', async () => {
      for (const [http, name] of [
        [t.objectsHttp, 'objects'],
        [t.setsHttp, 'object-sets'],
      ] as const) {
        const doc = (await http().get(`/docs/${name}-json`).expect(200)).body;
        expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
        expect(doc.security).toEqual([{ bearer: [] }]);
      }
    });

    it('health needs no token', async () => {
      await t.objectsHttp().get('/health/live').expect(200);
      await t.objectsHttp().get('/health/ready').expect(200);
      await t.setsHttp().get('/health/ready').expect(200);
    });
  });

  it('leak test: no read response to an alpha token contains anything of environment beta', async () => {
    const a = bearer(alpha);
    const bodies: string[] = [];
    const take = async (p: Promise<Res>) => bodies.push((await p).text);
    await take(t.objectsHttp().get('/objects/shared').set(a));
    await take(
      t
        .objectsHttp()
        .post('/objects/bulk')
        .set(a)
        .send({ objectIds: ['a-1', 'shared', `${SECRET}-1`, `${SECRET}-co`, 'c-1'] }),
    );
    const filters = [
      { type: 'all', all: {} },
      { type: 'tag', tag: { tags: ['vip'] } },
      { type: 'environment', environmentIds: undefined, environment: { environmentIds: ['beta'] } },
      { type: 'linkedFrom', linkedFrom: { linkId: 'knows', source: { type: 'all', all: {} } } },
      { type: 'linksTo', linksTo: { linkId: 'knows', target: { type: 'objectId', objectId: { ids: [`${SECRET}-1`] } } } },
      {
        type: 'linkedFrom',
        linkedFrom: {
          linkId: 'knows',
          source: { type: 'linksTo', linksTo: { linkId: 'knows', target: { type: 'objectId', objectId: { ids: [`${SECRET}-1`] } } } },
        },
      },
      { type: 'hasLink', hasLink: { linkId: 'knows', targetIds: [`${SECRET}-1`] } },
      { type: 'propertyText', propertyText: { query: SECRET } },
      { type: 'propertyPrefix', propertyPrefix: { propertyId: 'name', prefix: 'Name' } },
    ].map((x) => {
      const { environmentIds: _drop, ...rest } = x as Record<string, unknown>;
      return rest;
    });
    for (const filter of filters) {
      await take(t.objectsHttp().post('/objects/search').set(a).send({ filter, loadLinks: true }));
      for (const id of Object.values(sets))
        await take(t.objectsHttp().post('/objects/search').set(a).send({ filter, loadLinks: true, startingSet: id }));
    }
    await take(
      t
        .objectsHttp()
        .post('/objects/internal/members')
        .set(a)
        .send({ filter: { type: 'all', all: {} }, limit: 100 }),
    );
    await take(t.objectsHttp().get('/objects/alpha/shared/history').query(W).set(a));
    await take(t.objectsHttp().get('/objects/beta/shared/history').query(W).set(a));
    await take(t.objectsHttp().get('/objects/versioned/alpha/shared?version=1').set(a));
    for (const id of Object.values(sets)) {
      await take(t.setsHttp().get(`/object-sets/${id}/metadata`).set(a));
      await take(t.setsHttp().get(`/object-sets/${id}/members`).set(a));
      await take(t.setsHttp().get(`/object-sets/${id}/members?consistency=EVENTUALLY`).set(a));
      await take(t.setsHttp().get(`/object-sets/internal/${id}/filter`).set(a));
    }
    expect(bodies.length).toBeGreaterThan(50);
    // Reads that name a hidden object answer exactly as for one that never existed (they echo only the asked id).
    const hidden = await t.objectsHttp().get(`/objects/versioned/beta/${SECRET}-1?version=1`).set(a).expect(404);
    const never = await t.objectsHttp().get(`/objects/versioned/beta/never-existed?version=1`).set(a).expect(404);
    expect(hidden.body.errorName).toBe(never.body.errorName);
    expect(Object.keys(hidden.body.parameters)).toEqual(Object.keys(never.body.parameters));
    await t.objectsHttp().get(`/objects/${SECRET}-1`).set(a).expect(404);
    const leaks = bodies.filter((b) => b.includes(SECRET));
    expect(leaks).toEqual([]);
    // The same calls with the beta token do see beta (the test can find a leak when there is one).
    const betaView = (await t.setsHttp().get(`/object-sets/${sets.vip}/members`).set(bearer(beta))).text;
    expect(betaView).toContain(SECRET);
  });
});
