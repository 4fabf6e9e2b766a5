import { createHmac } from 'node:crypto';
import { DEV_PAGING_TOKEN_SECRET } from '@app/platform';
import { startBothApps, TestBothApps } from './support/apps';
import { WRITE_ONTOLOGY } from './support/ontologies';

/** Hardening (README Security) that needs no special set-up: bounds on what one request may cost. */
describe('hardening: bounds on one request', () => {
  let t: TestBothApps;

  beforeAll(async () => {
    t = await startBothApps({ OBJECT_SET_MEMBER_LIMIT: '2' });
    await t.objectsHttp().put('/ontology').send(WRITE_ONTOLOGY).expect(200);
    const objects = ['p-1', 'p-2', 'p-3'].map((id, i) => ({
      environmentId: 'prod',
      id,
      type: 'person',
      properties: [{ id: 'name', value: `N ${id}`, origin: 'crm' }, { id: 'age', value: 30 + i, origin: 'crm' }],
    }));
    await t.objectsHttp().post('/objects/ingest').send({ objects }).expect(200);
  });
  afterAll(() => t.close());

  it("the internal members call's limit is capped by OBJECT_SET_MEMBER_LIMIT, whatever the caller asks for", async () => {
    const res = await t.objectsHttp().post('/objects/internal/members').send({ filter: { type: 'all', all: {} }, limit: 10_000_000 });
    // The contract's "too large" answer (internal-api.contract.ts), at the capped limit.
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ errorCode: 'REQUEST_ENTITY_TOO_LARGE', errorName: 'MembersTooLarge', parameters: { limit: 2 } });
    const within = await t.objectsHttp().post('/objects/internal/members').send({ filter: { type: 'objectId', objectId: { ids: ['p-1', 'p-2'] } }, limit: 10_000_000 });
    expect(within.body.members).toEqual({ prod: ['p-1', 'p-2'] });
  });

  describe('a paging token signed with a known secret but holding a forged position is 400 InvalidPagingToken, never 500', () => {
    /** `token` with its position replaced by `position`, signed again with the development secret (what the apps run with here). */
    const forge = (token: string, position: unknown) => {
      const { b } = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
      const payload = Buffer.from(JSON.stringify({ b, p: position })).toString('base64url');
      return `${payload}.${createHmac('sha256', DEV_PAGING_TOKEN_SECRET).update(payload).digest('base64url')}`;
    };
    const expectForgedRefused = (res: { status: number; body: Record<string, unknown> }) => {
      expect({ status: res.status, errorName: res.body.errorName }).toEqual({ status: 400, errorName: 'InvalidPagingToken' });
    };

    it('bulk', async () => {
      const ids = { objectIds: ['p-1', 'p-2', 'p-3'] };
      const first = await t.objectsHttp().post('/objects/bulk?pageSize=1').send(ids).expect(200);
      for (const p of [{ ord: 'x', env: 'prod' }, { ord: 1, env: 7 }, 'x', null, { ord: 1e300, env: 'prod' }]) {
        expectForgedRefused(await t.objectsHttp().post(`/objects/bulk?pageSize=1&pagingToken=${forge(first.body.pagingToken, p)}`).send(ids));
      }
    });

    it('history', async () => {
      await t.objectsHttp().put('/objects/prod/p-1').send({ type: 'person', properties: [{ id: 'name', value: 'again', origin: 'crm' }] }).expect(200);
      const url = '/objects/prod/p-1/history?startTime=2000-01-01T00:00:00Z&endTime=2100-01-01T00:00:00Z&pageSize=1';
      const first = await t.objectsHttp().get(url).expect(200);
      for (const p of ['abc', -1, 1.5, { v: 1 }]) expectForgedRefused(await t.objectsHttp().get(`${url}&pagingToken=${forge(first.body.pagingToken, p)}`));
    });

    it('search, unordered and ordered (a key value that does not cast to the key type)', async () => {
      const body = { filter: { type: 'all', all: {} } };
      const first = await t.objectsHttp().post('/objects/search?pageSize=1').send(body).expect(200);
      for (const p of [{ env: 1, id: 'p-1' }, { env: 'prod' }, 'x', { env: 'prod', id: 'p-1', k: ['x'] }]) {
        expectForgedRefused(await t.objectsHttp().post(`/objects/search?pageSize=1&pagingToken=${forge(first.body.pagingToken, p)}`).send(body));
      }
      const ordered = { ...body, orderBy: [{ propertyId: 'age', direction: 'DESC' }] };
      const page = await t.objectsHttp().post('/objects/search?pageSize=1').send(ordered).expect(200);
      for (const p of [{ k: ['not a number'], env: 'prod', id: 'p-3' }, { k: [], env: 'prod', id: 'p-3' }, { k: [1], env: 'prod', id: 'p-3' }]) {
        expectForgedRefused(await t.objectsHttp().post(`/objects/search?pageSize=1&pagingToken=${forge(page.body.pagingToken, p)}`).send(ordered));
      }
      // The genuine token still pages.
      expect((await t.objectsHttp().post(`/objects/search?pageSize=1&pagingToken=${page.body.pagingToken}`).send(ordered)).status).toBe(200);
    });
  });
});

