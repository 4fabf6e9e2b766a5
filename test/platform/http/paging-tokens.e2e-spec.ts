import { createHmac } from 'node:crypto';
import { DEV_PAGING_TOKEN_SECRET } from '@app/platform';
import { startBothApps, TestBothApps } from '../../support/apps';
import { WRITE_ONTOLOGY } from '../../support/ontologies';

/**
 * A paging token is signed, but whoever knows the secret (the development default these apps run
 * with, a leaked one) can sign any position. Every field of a position that reaches SQL is
 * checked when the token is decoded: a forged one is 400 InvalidPagingToken, never a cast error
 * answered 500. Here the fields that reached casts: set search's `c` (timestamptz), `s` (real) and
 * `i`, a snapshot walk's `t` (timestamptz) and history's version (integer); and positions of the
 * wrong shape for bulk, history and search, unordered and ordered (a key value that does not cast
 * to the key type).
 */
describe('forged paging-token positions are 400 InvalidPagingToken, never 500', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps();
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = ['p-1', 'p-2', 'p-3'].map((id, i) => ({
      environmentId: 'prod',
      id,
      type: 'person',
      properties: [
        { id: 'name', value: `N ${id}`, origin: 'crm' },
        { id: 'age', value: 30 + i, origin: 'crm' },
      ],
    }));
    await t.objectsHttp().post('/objects/ingest').send({ objects }).expect(200);
    for (const title of ['Report one', 'Report two', 'Report three']) {
      await t
        .setsHttp()
        .post('/object-sets')
        .send({ title, definition: { type: 'empty', empty: {} } })
        .expect(201);
    }
  });
  afterAll(() => t?.close());

  /** `token` with its position replaced by `position`, signed again with the development secret. */
  const forge = (token: string, position: unknown) => {
    const { b } = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
    const payload = Buffer.from(JSON.stringify({ b, p: position })).toString('base64url');
    return `${payload}.${createHmac('sha256', DEV_PAGING_TOKEN_SECRET).update(payload).digest('base64url')}`;
  };
  const positionOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).p;
  const refused = (res: { status: number; body: Record<string, unknown> }) => ({ status: res.status, errorName: res.body.errorName });
  const REFUSED = { status: 400, errorName: 'InvalidPagingToken' };

  /** Instants a Date parses but PostgreSQL cannot read back, or that are no instants at all. */
  const BAD_INSTANTS = [
    '+275760-09-13T00:00:00.000Z',
    '-000001-01-01T00:00:00.000Z',
    '10000-01-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    'yesterday',
    '',
    7,
  ];

  it('set search, newest first: createdAt (c) and id (i)', async () => {
    const body = { filter: { type: 'userId', userId: { userId: 'anonymous' } }, maxPageSize: 1 };
    const first = await t.setsHttp().post('/object-sets/search').send(body).expect(200);
    const p = positionOf(first.body.pagingToken);
    for (const forged of [...BAD_INSTANTS.map((c) => ({ ...p, c })), { ...p, i: 'a\u0000b' }, { ...p, i: 3 }, { ...p, s: '1' }]) {
      expect([
        forged,
        refused(
          await t
            .setsHttp()
            .post('/object-sets/search')
            .send({ ...body, pagingToken: forge(first.body.pagingToken, forged) }),
        ),
      ]).toEqual([forged, REFUSED]);
    }
    expect(
      (
        await t
          .setsHttp()
          .post('/object-sets/search')
          .send({ ...body, pagingToken: first.body.pagingToken })
      ).status,
    ).toBe(200);
  });

  it('set search, best match first: the score (s)', async () => {
    const body = { filter: { type: 'title', title: { title: 'report', fuzzy: true } }, maxPageSize: 1 };
    const first = await t.setsHttp().post('/object-sets/search').send(body).expect(200);
    const p = positionOf(first.body.pagingToken);
    for (const s of ['1e39', '-1', '5', '', ' 1', '0x1', 'NaN', 'Infinity', 1, undefined]) {
      const forged = { ...p, s };
      expect([
        s,
        refused(
          await t
            .setsHttp()
            .post('/object-sets/search')
            .send({ ...body, pagingToken: forge(first.body.pagingToken, forged) }),
        ),
      ]).toEqual([s, REFUSED]);
    }
    expect(
      (
        await t
          .setsHttp()
          .post('/object-sets/search')
          .send({ ...body, pagingToken: first.body.pagingToken })
      ).status,
    ).toBe(200);
  });

  it('the instant of a snapshot walk (t): bulk and search', async () => {
    const bulk = { objectIds: ['p-1', 'p-2', 'p-3'], snapshot: true };
    const firstBulk = await t.objectsHttp().post('/objects/bulk?pageSize=1').send(bulk).expect(200);
    const search = { filter: { type: 'all', all: {} }, snapshot: true };
    const firstSearch = await t.objectsHttp().post('/objects/search?pageSize=1').send(search).expect(200);
    for (const bad of BAD_INSTANTS) {
      const b = forge(firstBulk.body.pagingToken, { ...positionOf(firstBulk.body.pagingToken), t: bad });
      expect([bad, refused(await t.objectsHttp().post(`/objects/bulk?pageSize=1&pagingToken=${b}`).send(bulk))]).toEqual([bad, REFUSED]);
      const s = forge(firstSearch.body.pagingToken, { ...positionOf(firstSearch.body.pagingToken), t: bad });
      expect([bad, refused(await t.objectsHttp().post(`/objects/search?pageSize=1&pagingToken=${s}`).send(search))]).toEqual([
        bad,
        REFUSED,
      ]);
    }
  });

  it('history: a version past what an integer holds', async () => {
    await t
      .objectsHttp()
      .put('/objects/prod/p-1')
      .send({ type: 'person', properties: [{ id: 'name', value: 'again', origin: 'crm' }] })
      .expect(200);
    const url = '/objects/prod/p-1/history?startTime=2000-01-01T00:00:00Z&endTime=2100-01-01T00:00:00Z&pageSize=1';
    const first = await t.objectsHttp().get(url).expect(200);
    for (const v of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      expect([v, refused(await t.objectsHttp().get(`${url}&pagingToken=${forge(first.body.pagingToken, v)}`))]).toEqual([v, REFUSED]);
    }
    expect((await t.objectsHttp().get(`${url}&pagingToken=${forge(first.body.pagingToken, 2 ** 31 - 1)}`)).status).toBe(200);
  });

  it('bulk: positions of the wrong shape', async () => {
    const ids = { objectIds: ['p-1', 'p-2', 'p-3'] };
    const first = await t.objectsHttp().post('/objects/bulk?pageSize=1').send(ids).expect(200);
    for (const p of [{ ord: 'x', env: 'prod' }, { ord: 1, env: 7 }, 'x', null, { ord: 1e300, env: 'prod' }]) {
      expect([
        p,
        refused(
          await t
            .objectsHttp()
            .post(`/objects/bulk?pageSize=1&pagingToken=${forge(first.body.pagingToken, p)}`)
            .send(ids),
        ),
      ]).toEqual([p, REFUSED]);
    }
  });

  it('history: versions of the wrong shape', async () => {
    const url = '/objects/prod/p-2/history?startTime=2000-01-01T00:00:00Z&endTime=2100-01-01T00:00:00Z&pageSize=1';
    await t
      .objectsHttp()
      .put('/objects/prod/p-2')
      .send({ type: 'person', properties: [{ id: 'name', value: 'again', origin: 'crm' }] })
      .expect(200);
    const first = await t.objectsHttp().get(url).expect(200);
    for (const p of ['abc', -1, 1.5, { v: 1 }]) {
      expect([p, refused(await t.objectsHttp().get(`${url}&pagingToken=${forge(first.body.pagingToken, p)}`))]).toEqual([p, REFUSED]);
    }
  });

  it('search, unordered and ordered (a key value that does not cast to the key type)', async () => {
    const body = { filter: { type: 'all', all: {} } };
    const first = await t.objectsHttp().post('/objects/search?pageSize=1').send(body).expect(200);
    for (const p of [{ env: 1, id: 'p-1' }, { env: 'prod' }, 'x', { env: 'prod', id: 'p-1', k: ['x'] }]) {
      expect([
        p,
        refused(
          await t
            .objectsHttp()
            .post(`/objects/search?pageSize=1&pagingToken=${forge(first.body.pagingToken, p)}`)
            .send(body),
        ),
      ]).toEqual([p, REFUSED]);
    }
    const ordered = { ...body, orderBy: [{ propertyId: 'age', direction: 'DESC' }] };
    const page = await t.objectsHttp().post('/objects/search?pageSize=1').send(ordered).expect(200);
    for (const p of [
      { k: ['not a number'], env: 'prod', id: 'p-3' },
      { k: [], env: 'prod', id: 'p-3' },
      { k: [1], env: 'prod', id: 'p-3' },
    ]) {
      expect([
        p,
        refused(
          await t
            .objectsHttp()
            .post(`/objects/search?pageSize=1&pagingToken=${forge(page.body.pagingToken, p)}`)
            .send(ordered),
        ),
      ]).toEqual([p, REFUSED]);
    }
    // The genuine token still pages.
    expect((await t.objectsHttp().post(`/objects/search?pageSize=1&pagingToken=${page.body.pagingToken}`).send(ordered)).status).toBe(200);
  });
});
